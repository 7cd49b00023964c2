/* convert_sample.c — GPU sampling (GPUTRACE_SAMPLE) in the Perfetto trace: CUPTI recorded only
 * inside windows that CAPTURE records of source 4 open and close, so the GPU tracks are empty
 * between them whatever the GPU did. Each such stretch is a slice "GPU not recorded (sampling)"
 * on a track of that name, so nobody reads the gaps as idle; a sampled trace without any window
 * gets one slice over the whole run. */
#include "convert_internal.h"

#define SAMPLE_TRACK_NAME "GPU not recorded (sampling)"
#define SAMPLE_LANE 2000003 /* beside the "gputrace advice" and "gputrace phases" tracks */

static void not_recorded(cv_ctx *c, cv_file *f, int64_t ts, int64_t end_ts, const char *detail)
{
    cv_side_slice(c, f, &f->not_sampled, SAMPLE_TRACK_NAME, SAMPLE_LANE, -4, ts, end_ts,
                  SAMPLE_TRACK_NAME, detail);
}

static const char *const BETWEEN =
    "GPUTRACE_SAMPLE: CUPTI's records were off between windows; empty GPU tracks here are not "
    "idle time (the calls are recorded all along; gputrace report measures the GPU in the "
    "windows)";

void cv_on_capture(cv_ctx *c, cv_file *f, const gt_record *rec)
{
    gt_rec_capture cap;
    if (rec->body_size < sizeof cap)
        return;
    gt_body_copy(&cap, sizeof cap, rec);
    if (cap.source != GT_CAPTURE_SRC_SAMPLE)
        return;
    f->sample_seen = 1;
    if (!cap.on && !f->sample_off_ns) {
        f->sample_off_ns = cap.t_ns ? cap.t_ns : 1;
    } else if (cap.on && f->sample_off_ns) {
        int64_t ts, end_ts;
        if (cv_ts(c, f->sample_off_ns, &ts) && cv_ts(c, cap.t_ns, &end_ts))
            not_recorded(c, f, ts, end_ts, BETWEEN);
        f->sample_off_ns = 0;
    }
}

/* At the end of the file: a stretch still off runs to the file's last event. */
void cv_sample_finish(cv_ctx *c, cv_file *f)
{
    if (!(f->hdr->flags & GT_HDR_GPU_SAMPLED))
        return;
    int64_t ts;
    if (!f->sample_seen)
        not_recorded(c, f, f->first_ts, c->max_ts,
                     "GPUTRACE_SAMPLE, but no window was recorded: no GPU record in this run");
    else if (f->sample_off_ns && cv_ts(c, f->sample_off_ns, &ts))
        not_recorded(c, f, ts, c->max_ts, BETWEEN);
}
