/*
 * gpurun.h: the GPUs' state while one run goes on.  A thread reads every
 * visible device DEVICE_SAMPLE_HZ times a second from just before the
 * engine starts to just after it ends, and the run keeps what people
 * compare, not the readings (struct store_run_gpu).
 */
#ifndef BISECTD_GPURUN_H
#define BISECTD_GPURUN_H

struct device_set;
struct gpu_watch;
struct store_run_gpu;

/*
 * Start watching the devices of d (NULL, or none: nothing is watched and
 * *w is NULL).  Returns 0, or -1 when the thread cannot start (then *w
 * is NULL too and the run has no GPU figures).
 */
int gpu_watch_start(struct device_set *d, struct gpu_watch **w);

/*
 * Stop watching, summarise into out and free w.  With w NULL, out says
 * there were no readings (samples 0): stored as NULLs, never zeros.
 */
void gpu_watch_stop(struct gpu_watch *w, struct store_run_gpu *out);

#endif
