/* kb1_097_scaled_dot_product_attention reference: KernelBench level 1 problem 97 (97_ScaledDotProductAttention), every sum, product and function in double, rounded to float once per output element. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

void kb_scaled_dot_product_attention(const float *Q, const float *K, const float *V, float *out, int batch_size, int num_heads, int sequence_length, int embedding_dimension)
{
	double *t1 = malloc(sizeof(double) * (long)batch_size * num_heads * sequence_length * sequence_length);
	double *t2 = malloc(sizeof(double) * (long)batch_size * num_heads * sequence_length * sequence_length);
	if (!t1 || !t2) {
		free(t1);
		free(t2);
		return; /* the output keeps the harness's poison: a failed allocation is a failed check */
	}
	{
		const long gm = (long)sequence_length, gn = (long)sequence_length, gk = (long)embedding_dimension;
		for (long bt = 0; bt < (long)batch_size * num_heads; bt++) {
			for (long ii = 0; ii < gm; ii++) {
				for (long jj = 0; jj < gn; jj++) {
					double acc = 0.0;
					for (long kk = 0; kk < gk; kk++) {
						acc += (double)Q[bt * gm * gk + ii * gk + kk] * K[bt * gk * gn + jj * gk + kk];
					}
					t1[(bt * gm + ii) * gn + jj] = acc * (double)(1.0 / sqrt((double)embedding_dimension));
				}
			}
		}
	}
	{
		const long O = (long)batch_size * num_heads * sequence_length, R = (long)sequence_length, I = 1L;
		for (long o = 0; o < O; o++) {
			for (long i = 0; i < I; i++) {
				const double *xp = t1 + o * R * I + i;
				double m = xp[0], s = 0;
				for (long r = 1; r < R; r++) {
					m = xp[r * I] > m ? xp[r * I] : m;
				}
				for (long r = 0; r < R; r++) {
					s += exp((double)xp[r * I] - m);
				}
				for (long r = 0; r < R; r++) {
					t2[o * R * I + i + r * I] = exp((double)xp[r * I] - m) / s;
				}
			}
		}
	}
	{
		const long gm = (long)sequence_length, gn = (long)embedding_dimension, gk = (long)sequence_length;
		for (long bt = 0; bt < (long)batch_size * num_heads; bt++) {
			for (long ii = 0; ii < gm; ii++) {
				for (long jj = 0; jj < gn; jj++) {
					double acc = 0.0;
					for (long kk = 0; kk < gk; kk++) {
						acc += (double)t2[bt * gm * gk + ii * gk + kk] * V[bt * gk * gn + kk * gn + jj];
					}
					out[(bt * gm + ii) * gn + jj] = (float)(acc);
				}
			}
		}
	}
	free(t1);
	free(t2);
}
