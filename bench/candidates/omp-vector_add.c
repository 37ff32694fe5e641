/* omp-vector_add.c - an honest elementwise kernel: OpenMP threads over SIMD lanes (bench/referee.sh
 * pipeline: the elementwise family). */
void vector_add(const float *a, const float *b, float *c, int n)
{
#pragma omp parallel for simd schedule(static)
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i];
}
