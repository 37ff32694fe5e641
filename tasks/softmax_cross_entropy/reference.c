/* softmax_cross_entropy reference: stable log-sum-exp in double minus the label's logit. */
#include <math.h>

void softmax_cross_entropy(const float *logits, const int *labels, float *loss, int rows, int classes)
{
	for (int r = 0; r < rows; r++) {
		const float *x = logits + (long)r * classes;
		double m = x[0], s = 0.0;
		for (int j = 1; j < classes; j++)
			m = x[j] > m ? x[j] : m;
		for (int j = 0; j < classes; j++)
			s += exp(x[j] - m);
		loss[r] = (float)(m + log(s) - x[labels[r]]);
	}
}
