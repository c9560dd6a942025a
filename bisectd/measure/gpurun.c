/*
 * gpurun.c: sampling the GPUs during a run (see gpurun.h).
 *
 * Over all visible devices and every reading: the median SM and memory
 * clocks (a median, so the first reading, taken while the engine loads,
 * does not move it), the highest temperature, the mean power (the
 * devices' sum) and utilisation (their mean), the OR of every throttle
 * reason seen, and the peak memory used: the most the devices' memory in
 * use went above what it was just before the run, which is the engine's
 * on a machine that runs nothing else (no process is matched by pid, as
 * the engine's pid is known only once it runs and containers hide it).
 * Energy is the difference of the devices' energy counters across the
 * run, where every device has one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bisectd/device/device.h"
#include "gpurun.h"
#include "store/store.h"

#define GROW 64

struct gpu_watch {
	struct device_set *d;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	/* Just before the run. */
	int64_t mem_base, energy0[DEVICE_MAX];
	int mem_base_known;
	/* What the readings gave. */
	double *sm, *mem;
	size_t nsm, nmem, cap_sm, cap_mem;
	int ticks, temp_max;
	double power_sum, util_sum;
	int npower, nutil, throttle_known;
	uint64_t throttle;
	int64_t mem_peak;
	int mem_peak_known;
	int oom;
};

static void
push(struct gpu_watch *w, double **v, size_t *n, size_t *cap, double x)
{
	if (*n == *cap) {
		double *p = realloc(*v, (*cap + GROW) * sizeof(**v));

		if (p == NULL) {
			w->oom = 1;
			return;
		}
		*v = p;
		*cap += GROW;
	}
	(*v)[(*n)++] = x;
}

/* One reading of every device, into the tallies. */
static void
tick(struct gpu_watch *w)
{
	int64_t used = 0, power = 0;
	int used_known = 1, power_known = 1, util = 0, nutil = 0;

	for (size_t i = 0; i < w->d->n; i++) {
		struct device_sample s;

		if (device_sample(w->d, i, &s) < 0) {
			used_known = power_known = 0;
			continue;
		}
		if (s.sm_mhz >= 0)
			push(w, &w->sm, &w->nsm, &w->cap_sm, s.sm_mhz);
		if (s.mem_mhz >= 0)
			push(w, &w->mem, &w->nmem, &w->cap_mem, s.mem_mhz);
		if (s.temp_c > w->temp_max)
			w->temp_max = s.temp_c;
		if (s.power_mw >= 0)
			power += s.power_mw;
		else
			power_known = 0;
		if (s.util_pct >= 0) {
			util += s.util_pct;
			nutil++;
		}
		if (s.throttle_known) {
			w->throttle |= s.throttle;
			w->throttle_known = 1;
		}
		if (s.mem_used >= 0)
			used += s.mem_used;
		else
			used_known = 0;
	}
	w->ticks++;
	if (power_known) {
		w->power_sum += (double)power;
		w->npower++;
	}
	if (nutil > 0) {
		w->util_sum += (double)util / nutil;
		w->nutil++;
	}
	if (used_known && w->mem_base_known) {
		int64_t over = used - w->mem_base;

		if (over < 0)
			over = 0;
		if (!w->mem_peak_known || over > w->mem_peak)
			w->mem_peak = over;
		w->mem_peak_known = 1;
	}
}

static void *
watch_main(void *arg)
{
	struct gpu_watch *w = arg;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		pthread_mutex_unlock(&w->mu);
		tick(w);
		next.tv_nsec += 1000000000L / DEVICE_SAMPLE_HZ;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		pthread_mutex_lock(&w->mu);
		while (!w->stop && pthread_cond_timedwait(&w->cv, &w->mu,
		    &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* The memory in use and the energy counters, summed or per device:
 * known only where every device answered. */
static void
read_counters(struct device_set *d, int64_t *used, int *used_known,
    int64_t energy[DEVICE_MAX])
{
	*used = 0;
	*used_known = 1;
	for (size_t i = 0; i < d->n; i++) {
		struct device_sample s;

		if (device_sample(d, i, &s) < 0)
			s.mem_used = s.energy_mj = -1;
		if (s.mem_used < 0)
			*used_known = 0;
		*used += s.mem_used;
		energy[i] = s.energy_mj;
	}
}

int
gpu_watch_start(struct device_set *d, struct gpu_watch **out)
{
	struct gpu_watch *w;
	pthread_condattr_t ca;

	*out = NULL;
	if (d == NULL || d->n == 0)
		return 0;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	w->d = d;
	w->temp_max = -1;
	read_counters(d, &w->mem_base, &w->mem_base_known, w->energy0);
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&w->thread, NULL, watch_main, w) != 0) {
		pthread_cond_destroy(&w->cv);
		pthread_mutex_destroy(&w->mu);
		free(w);
		return -1;
	}
	*out = w;
	return 0;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, size_t n)
{
	if (n == 0)
		return -1;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void
gpu_watch_stop(struct gpu_watch *w, struct store_run_gpu *g)
{
	int64_t used, energy1[DEVICE_MAX], joules_mj = 0;
	int used_known, energy_known = 1;

	memset(g, 0, sizeof(*g));
	g->sm_mhz = g->mem_mhz = g->power_w = g->util_pct = g->energy_j = -1;
	g->temp_max_c = -1;
	g->throttle = g->mem_peak = -1;
	if (w == NULL)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	read_counters(w->d, &used, &used_known, energy1);
	for (size_t i = 0; i < w->d->n; i++) {
		if (w->energy0[i] < 0 || energy1[i] < w->energy0[i])
			energy_known = 0;
		joules_mj += energy1[i] - w->energy0[i];
	}
	g->samples = w->oom ? 0 : w->ticks;
	if (g->samples > 0) {
		g->sm_mhz = median(w->sm, w->nsm);
		g->mem_mhz = median(w->mem, w->nmem);
		g->temp_max_c = w->temp_max;
		if (w->npower > 0)
			g->power_w = w->power_sum / w->npower / 1000;
		if (w->nutil > 0)
			g->util_pct = w->util_sum / w->nutil;
		if (w->throttle_known)
			g->throttle = (int64_t)w->throttle;
		if (w->mem_peak_known)
			g->mem_peak = w->mem_peak;
		if (energy_known)
			g->energy_j = (double)joules_mj / 1000;
		g->throttled = w->throttle_known &&
		    (w->throttle & DEVICE_THR_THROTTLED) != 0;
	}
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
	free(w->sm);
	free(w->mem);
	free(w);
}
