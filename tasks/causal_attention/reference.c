/* causal_attention reference: attention over keys j <= i, softmax and weighted sum in double. */
#include <math.h>
#include <stdlib.h>

void causal_attention(const float *q, const float *k, const float *v, float *o, int bh, int seq, int dim)
{
	double *s = malloc(sizeof(double) * (size_t)seq);
	if (!s)
		abort();
	double scale = 1.0 / sqrt((double)dim);
	for (int h = 0; h < bh; h++) {
		long base = (long)h * seq * dim;
		for (int i = 0; i < seq; i++) {
			int n = i + 1;
			double m = -INFINITY, sum = 0.0;
			for (int j = 0; j < n; j++) {
				double d = 0.0;
				for (int c = 0; c < dim; c++)
					d += (double)q[base + (long)i * dim + c] * k[base + (long)j * dim + c];
				s[j] = d * scale;
				m = s[j] > m ? s[j] : m;
			}
			for (int j = 0; j < n; j++)
				sum += s[j] = exp(s[j] - m);
			for (int c = 0; c < dim; c++) {
				double a = 0.0;
				for (int j = 0; j < n; j++)
					a += s[j] * v[base + (long)j * dim + c];
				o[base + (long)i * dim + c] = (float)(a / sum);
			}
		}
	}
	free(s);
}
