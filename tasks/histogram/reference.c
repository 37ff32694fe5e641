/* histogram reference: 256 counters, one pass. */
void histogram(const uint8_t *data, int *counts, int n)
{
	for (int v = 0; v < 256; v++)
		counts[v] = 0;
	for (int i = 0; i < n; i++)
		counts[data[i]]++;
}
