/* serve_metrics.c - leap-serve's counters and their Prometheus text (/metrics). */
/*
 * What a cluster's monitoring needs of an environment server: records answered by verdict,
 * requests by endpoint and status class, each device's queue depth, the busy devices, the
 * requests in progress, the refusals, cancels, retries and pipeline restarts, and histograms
 * of the seconds from admission to answer. The event loop counts; the queue depths are read
 * under the engine's lock. The text is Prometheus' exposition format 0.0.4.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/jsonl.h"
#include "serve_int.h"
#include "core/banned.h"

static const char *const ep_name[EP_COUNT] = {"other", "evaluate", "turn", "reset", "step", "reward", "ws", "prompts", "get", "stream"};

void srv_hist_add(struct srv_hist *h, double v)
{
	static const double le[SRV_HBUCKETS] = {0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300};
	for (int i = 0; i < SRV_HBUCKETS; i++)
		if (v <= le[i]) {
			h->bucket[i]++;
			break;
		}
	h->count++;
	h->sum += v;
}

void srv_count_request(struct srv *s, int ep, int status)
{
	int cls = status / 100;
	s->m.requests[ep][cls >= 0 && cls < 8 ? cls : 0]++;
	if (status == 429)
		s->m.rejected++;
}

/* Counts an answer's verdict for /metrics. */
void srv_count_verdict(struct srv *s, const char *line, size_t len)
{
	json_t *rec = json_loadb(line, len, 0, NULL);
	const char *st = !rec ? "error" : json_object_get(rec, "error") ? "error" : leap_get_str(rec, "status", "none");
	void **slot = leap_hmap_put(&s->m.verdicts, st, strlen(st), NULL);
	*slot = (void *)((uintptr_t)*slot + 1);
	json_decref(rec);
}

/* ---- /metrics ---- */

static void hist_text(struct leap_buf *b, const char *name, const char *help, const struct srv_hist *h)
{
	static const char *const le[SRV_HBUCKETS] = {"0.01", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "30", "60", "300"};
	leap_buf_addf(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	uint64_t cum = 0;
	for (int i = 0; i < SRV_HBUCKETS; i++) {
		cum += h->bucket[i];
		leap_buf_addf(b, "%s_bucket{le=\"%s\"} %" PRIu64 "\n", name, le[i], cum);
	}
	char sum[LEAP_DOUBLE_BUF];
	leap_buf_addf(b, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %s\n%s_count %" PRIu64 "\n", name, h->count, name,
		      leap_fmt_double(sum, h->sum), name, h->count);
}

void srv_metrics_text(struct srv *s, struct leap_buf *b)
{
	leap_buf_adds(b, "# HELP leap_serve_records_total Records answered, by the status the filters gave (error: an error record).\n"
			 "# TYPE leap_serve_records_total counter\n");
	size_t pos = 0;
	const char *k;
	void *v;
	while (leap_hmap_next(&s->m.verdicts, &pos, &k, NULL, &v))
		leap_buf_addf(b, "leap_serve_records_total{status=\"%s\"} %" PRIuPTR "\n", k, (uintptr_t)v);
	leap_buf_adds(b, "# HELP leap_serve_requests_total Requests answered, by endpoint and status class.\n"
			 "# TYPE leap_serve_requests_total counter\n");
	for (int e = 0; e < EP_COUNT; e++)
		for (int cls = 1; cls < 6; cls++)
			if (s->m.requests[e][cls])
				leap_buf_addf(b, "leap_serve_requests_total{endpoint=\"%s\",code=\"%dxx\"} %" PRIu64 "\n", ep_name[e],
					      cls, s->m.requests[e][cls]);
	leap_buf_adds(b, "# HELP leap_serve_queue_depth Records a device holds: queued and inside its pipeline.\n"
			 "# TYPE leap_serve_queue_depth gauge\n");
	int busy = 0;
	pthread_mutex_lock(&s->mu);
	for (int d = 0; d < s->ndev; d++) {
		leap_buf_addf(b, "leap_serve_queue_depth{device=\"%s\"} %ld\n", s->dev[d].name, s->dev[d].nq + s->dev[d].nf);
		busy += s->dev[d].nf > 0;
	}
	uint64_t restarts = s->m.restarts;
	pthread_mutex_unlock(&s->mu);
	leap_buf_addf(b, "# HELP leap_serve_devices_busy Devices with records in their pipeline.\n"
			 "# TYPE leap_serve_devices_busy gauge\nleap_serve_devices_busy %d\n"
			 "# HELP leap_serve_devices Devices served.\n# TYPE leap_serve_devices gauge\nleap_serve_devices %d\n",
		      busy, s->ndev);
	leap_buf_addf(b, "# HELP leap_serve_requests_in_progress Requests admitted and not yet answered.\n"
			 "# TYPE leap_serve_requests_in_progress gauge\nleap_serve_requests_in_progress %ld\n"
			 "# HELP leap_serve_sessions WebSocket sessions open (OpenEnv and streams).\n# TYPE leap_serve_sessions gauge\n"
			 "leap_serve_sessions %d\n",
		      s->nreqs, s->sessions);
	leap_buf_addf(b, "# HELP leap_serve_rejected_total Requests refused with 429 (queues full).\n"
			 "# TYPE leap_serve_rejected_total counter\nleap_serve_rejected_total %" PRIu64 "\n"
			 "# HELP leap_serve_cancelled_records_total Records dropped: their client left or their deadline passed.\n"
			 "# TYPE leap_serve_cancelled_records_total counter\nleap_serve_cancelled_records_total %" PRIu64 "\n"
			 "# HELP leap_serve_retries_served_total Reward requests answered by an evaluation already made or in progress.\n"
			 "# TYPE leap_serve_retries_served_total counter\nleap_serve_retries_served_total %" PRIu64 "\n"
			 "# HELP leap_serve_pipeline_restarts_total Device pipelines ended to cancel work or after a failure.\n"
			 "# TYPE leap_serve_pipeline_restarts_total counter\nleap_serve_pipeline_restarts_total %" PRIu64 "\n",
		      s->m.rejected, s->m.cancelled, s->m.retries_served, restarts);
	leap_buf_addf(b, "# HELP leap_serve_draining 1 once a signal asked the server to finish.\n"
			 "# TYPE leap_serve_draining gauge\nleap_serve_draining %d\n",
		      s->draining);
	hist_text(b, "leap_serve_record_seconds", "Seconds from a record's admission to its answer.", &s->m.record_s);
	hist_text(b, "leap_serve_request_seconds", "Seconds from a request's admission to its last answer.", &s->m.request_s);
}

