/*
 * fake-nvml.c: a libnvidia-ml.so.1 for the tests, with exactly the NVML
 * symbols bisectd/device/nvml.c looks up, NVML's signatures and return
 * codes, and what it answers scripted by the file $FAKE_NVML_SCRIPT:
 *
 *   driver 550.54.15             nvmlSystemGetDriverVersion
 *   cuda 12040                   nvmlSystemGetCudaDriverVersion_v2
 *   gpu model="NVIDIA H100" uuid=GPU-1 vbios=96.00.61.00.01
 *       power-limit=700000 persistence=0 mig=0 ecc=1 app-sm=1755
 *       app-mem=2619 default-sm=1755 default-mem=2619   (one line each)
 *   unsupported energy power ... these answer NVML_ERROR_NOT_SUPPORTED
 *   at 0 sm=1980 mem=2619 temp=40 power=300000 util=95 reasons=0 used=N
 *   at 2.5 reasons=0x20 sm=1400  from 2.5 s after nvmlInit on
 *   phase 3 reasons=0x40         while the file $FAKE_NVML_PHASE holds 3
 *   no-driver                    nvmlInit answers DRIVER_NOT_LOADED
 *
 * Values apply to every GPU.  The energy counters add up the power read
 * over the time between readings.  Built with FAKE_NVML_OLD it is a
 * driver from before 535 (no clock event reasons under their new name)
 * that has no energy counter and no MIG: those symbols are absent, as on
 * such a machine.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_SUPPORTED 3
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_DRIVER_NOT_LOADED 9

typedef int nvmlReturn_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

#define MAXGPU 8
#define MAXSTEP 64

struct state {
	long long sm, mem, temp, power, util, reasons, used;
};

struct gpu {
	char model[96], uuid[96], vbios[64];
	long long power_limit, persistence, mig, ecc;
	long long app_sm, app_mem, def_sm, def_mem;
	double energy_mj;
};

struct step {
	int phase;		/* -1: by time */
	double at;
	struct state set;	/* -1: unchanged */
};

typedef struct gpu *nvmlDevice_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int inits, ngpu, no_driver;
static struct gpu gpus[MAXGPU];
static struct step steps[MAXSTEP];
static int nsteps;
static char driver[80], unsupported[512];
static long long cuda = -1;
static double t0, last_energy;

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The next word of *p: a key=value whose value may be "quoted". */
static char *
word(char **p)
{
	char *s = *p, *w, *q;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '\n')
		return NULL;
	w = q = s;
	while (*s && *s != '\n' && *s != ' ' && *s != '\t') {
		if (*s == '"') {
			for (s++; *s && *s != '"'; s++)
				*q++ = *s;
			if (*s)
				s++;
			continue;
		}
		*q++ = *s++;
	}
	if (*s)
		s++;
	*q = '\0';
	*p = s;
	return w;
}

static void
set_state(struct state *st, const char *k, long long v)
{
	if (strcmp(k, "sm") == 0)
		st->sm = v;
	else if (strcmp(k, "mem") == 0)
		st->mem = v;
	else if (strcmp(k, "temp") == 0)
		st->temp = v;
	else if (strcmp(k, "power") == 0)
		st->power = v;
	else if (strcmp(k, "util") == 0)
		st->util = v;
	else if (strcmp(k, "reasons") == 0)
		st->reasons = v;
	else if (strcmp(k, "used") == 0)
		st->used = v;
}

static void
set_gpu(struct gpu *g, const char *k, const char *v)
{
	long long n = strtoll(v, NULL, 0);

	if (strcmp(k, "model") == 0)
		snprintf(g->model, sizeof(g->model), "%s", v);
	else if (strcmp(k, "uuid") == 0)
		snprintf(g->uuid, sizeof(g->uuid), "%s", v);
	else if (strcmp(k, "vbios") == 0)
		snprintf(g->vbios, sizeof(g->vbios), "%s", v);
	else if (strcmp(k, "power-limit") == 0)
		g->power_limit = n;
	else if (strcmp(k, "persistence") == 0)
		g->persistence = n;
	else if (strcmp(k, "mig") == 0)
		g->mig = n;
	else if (strcmp(k, "ecc") == 0)
		g->ecc = n;
	else if (strcmp(k, "app-sm") == 0)
		g->app_sm = n;
	else if (strcmp(k, "app-mem") == 0)
		g->app_mem = n;
	else if (strcmp(k, "default-sm") == 0)
		g->def_sm = n;
	else if (strcmp(k, "default-mem") == 0)
		g->def_mem = n;
}

static void
read_script(void)
{
	const char *path = getenv("FAKE_NVML_SCRIPT");
	char line[1024], *p, *w, *eq;
	FILE *f;

	ngpu = nsteps = no_driver = 0;
	driver[0] = unsupported[0] = '\0';
	cuda = -1;
	if (path == NULL || (f = fopen(path, "r")) == NULL) {
		no_driver = 1;
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		p = line;
		if ((w = word(&p)) == NULL || w[0] == '#')
			continue;
		if (strcmp(w, "no-driver") == 0)
			no_driver = 1;
		else if (strcmp(w, "driver") == 0 && (w = word(&p)))
			snprintf(driver, sizeof(driver), "%s", w);
		else if (strcmp(w, "cuda") == 0 && (w = word(&p)))
			cuda = strtoll(w, NULL, 10);
		else if (strcmp(w, "unsupported") == 0)
			while ((w = word(&p)) != NULL)
				snprintf(unsupported + strlen(unsupported),
				    sizeof(unsupported) - strlen(unsupported),
				    " %s ", w);
		else if (strcmp(w, "gpu") == 0 && ngpu < MAXGPU) {
			struct gpu *g = &gpus[ngpu++];

			memset(g, 0, sizeof(*g));
			while ((w = word(&p)) != NULL)
				if ((eq = strchr(w, '=')) != NULL) {
					*eq = '\0';
					set_gpu(g, w, eq + 1);
				}
		} else if ((strcmp(w, "at") == 0 || strcmp(w, "phase") == 0) &&
		    nsteps < MAXSTEP) {
			struct step *s = &steps[nsteps++];
			int by_time = w[0] == 'a';

			/* Every field -1: unchanged. */
			memset(&s->set, 0xff, sizeof(s->set));
			w = word(&p);
			s->at = by_time && w ? strtod(w, NULL) : 0;
			s->phase = by_time || w == NULL ? -1 : atoi(w);
			while ((w = word(&p)) != NULL)
				if ((eq = strchr(w, '=')) != NULL) {
					*eq = '\0';
					set_state(&s->set, w, strtoll(eq + 1,
					    NULL, 0));
				}
		}
	}
	fclose(f);
}

static int
unsupported_field(const char *name)
{
	char key[64];

	snprintf(key, sizeof(key), " %s ", name);
	return strstr(unsupported, key) != NULL;
}

static void
apply(struct state *st, const struct state *set)
{
	const long long *from = (const long long *)set;
	long long *to = (long long *)st;

	for (size_t i = 0; i < sizeof(*st) / sizeof(long long); i++)
		if (from[i] != -1)
			to[i] = from[i];
}

/* What the GPUs do now: the time steps passed, then the phase's. */
static struct state
state_now(void)
{
	struct state st = { 0, 0, 0, 0, 0, 0, 0 };
	const char *path = getenv("FAKE_NVML_PHASE");
	double t = now_s() - t0;
	int phase = 0;
	FILE *f;

	if (path != NULL && (f = fopen(path, "r")) != NULL) {
		if (fscanf(f, "%d", &phase) != 1)
			phase = 0;
		fclose(f);
	}
	for (int i = 0; i < nsteps; i++)
		if (steps[i].phase < 0 && steps[i].at <= t)
			apply(&st, &steps[i].set);
	for (int i = 0; i < nsteps; i++)
		if (steps[i].phase >= 0 && steps[i].phase == phase)
			apply(&st, &steps[i].set);
	return st;
}

/* The energy counters brought to now: the power last read over the
 * time since, so that they add up what the readings showed. */
static void
advance_energy(void)
{
	static long long last_power;
	double t;

	pthread_mutex_lock(&mu);
	t = now_s();
	for (int i = 0; i < ngpu; i++)
		gpus[i].energy_mj += (double)last_power * (t - last_energy);
	last_energy = t;
	last_power = state_now().power;
	pthread_mutex_unlock(&mu);
}

static int
valid(nvmlDevice_t d)
{
	return inits > 0 && d >= gpus && d < gpus + ngpu;
}

#define CHECK_ARGS(ok) do {						\
	if (!inits)							\
		return NVML_ERROR_UNINITIALIZED;			\
	if (!(ok))							\
		return NVML_ERROR_INVALID_ARGUMENT;			\
} while (0)

#define CHECK_DEVICE(d, out, field) do {				\
	CHECK_ARGS(valid(d) && (out) != NULL);				\
	if (unsupported_field(field))					\
		return NVML_ERROR_NOT_SUPPORTED;			\
} while (0)

nvmlReturn_t
nvmlInit_v2(void)
{
	pthread_mutex_lock(&mu);
	if (inits == 0) {
		read_script();
		t0 = last_energy = now_s();
		for (int i = 0; i < ngpu; i++)
			gpus[i].energy_mj = 1e6 * (i + 1);
	}
	if (no_driver) {
		pthread_mutex_unlock(&mu);
		return NVML_ERROR_DRIVER_NOT_LOADED;
	}
	inits++;
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlShutdown(void)
{
	pthread_mutex_lock(&mu);
	if (inits == 0) {
		pthread_mutex_unlock(&mu);
		return NVML_ERROR_UNINITIALIZED;
	}
	inits--;
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}

const char *
nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	default:
		return "Unknown Error";
	}
}

nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *n)
{
	CHECK_ARGS(n != NULL);
	*n = (unsigned int)ngpu;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d)
{
	CHECK_ARGS(d != NULL && i < (unsigned int)ngpu);
	*d = &gpus[i];
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
	CHECK_ARGS(uuid != NULL && d != NULL);
	for (int i = 0; i < ngpu; i++)
		if (strcmp(gpus[i].uuid, uuid) == 0) {
			*d = &gpus[i];
			return NVML_SUCCESS;
		}
	return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t
nvmlDeviceGetIndex(nvmlDevice_t d, unsigned int *i)
{
	CHECK_DEVICE(d, i, "index");
	*i = (unsigned int)(d - gpus);
	return NVML_SUCCESS;
}

static nvmlReturn_t
copy_text(const char *v, char *out, unsigned int len)
{
	if (strlen(v) + 1 > len)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(out, v, strlen(v) + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t d, char *out, unsigned int len)
{
	CHECK_DEVICE(d, out, "name");
	return copy_text(d->model, out, len);
}

nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t d, char *out, unsigned int len)
{
	CHECK_DEVICE(d, out, "uuid");
	return copy_text(d->uuid, out, len);
}

nvmlReturn_t
nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *out, unsigned int len)
{
	CHECK_DEVICE(d, out, "vbios");
	return copy_text(d->vbios, out, len);
}

nvmlReturn_t
nvmlSystemGetDriverVersion(char *out, unsigned int len)
{
	CHECK_ARGS(out != NULL);
	return copy_text(driver, out, len);
}

nvmlReturn_t
nvmlSystemGetCudaDriverVersion_v2(int *v)
{
	CHECK_ARGS(v != NULL);
	if (cuda < 0 || unsupported_field("cuda"))
		return NVML_ERROR_NOT_SUPPORTED;
	*v = (int)cuda;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw)
{
	CHECK_DEVICE(d, mw, "power-limit");
	*mw = (unsigned int)d->power_limit;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *mode)
{
	CHECK_DEVICE(d, mode, "persistence");
	*mode = (int)d->persistence;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t
nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *cur, unsigned int *pend)
{
	CHECK_DEVICE(d, cur, "mig");
	if (pend == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cur = *pend = (unsigned int)d->mig;
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t
nvmlDeviceGetEccMode(nvmlDevice_t d, int *cur, int *pend)
{
	CHECK_DEVICE(d, cur, "ecc");
	if (pend == NULL)
		return NVML_ERROR_INVALID_ARGUMENT;
	*cur = *pend = (int)d->ecc;
	return NVML_SUCCESS;
}

/* NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2; graphics (0) is the SM's here. */
static nvmlReturn_t
pick_clock(int type, long long sm, long long mem, unsigned int *out)
{
	if (type < 0 || type > 3)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (type == 3)
		return NVML_ERROR_NOT_SUPPORTED;
	*out = (unsigned int)(type == 2 ? mem : sm);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned int *mhz)
{
	CHECK_DEVICE(d, mhz, "app-clocks");
	return pick_clock(type, d->app_sm, d->app_mem, mhz);
}

nvmlReturn_t
nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, int type,
    unsigned int *mhz)
{
	CHECK_DEVICE(d, mhz, "app-clocks");
	return pick_clock(type, d->def_sm, d->def_mem, mhz);
}

nvmlReturn_t
nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned int *mhz)
{
	struct state st;

	CHECK_DEVICE(d, mhz, "clocks");
	st = state_now();
	return pick_clock(type, st.sm, st.mem, mhz);
}

nvmlReturn_t
nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned int *c)
{
	CHECK_DEVICE(d, c, "temp");
	if (sensor != 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*c = (unsigned int)state_now().temp;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw)
{
	CHECK_DEVICE(d, mw, "power");
	advance_energy();
	*mw = (unsigned int)state_now().power;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	CHECK_DEVICE(d, u, "util");
	u->gpu = (unsigned int)state_now().util;
	u->memory = u->gpu / 2;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d,
    unsigned long long *r)
{
	CHECK_DEVICE(d, r, "reasons");
	*r = (unsigned long long)state_now().reasons;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t
nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	return nvmlDeviceGetCurrentClocksThrottleReasons(d, r);
}
#endif

nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *m)
{
	CHECK_DEVICE(d, m, "memory");
	m->total = 80ULL << 30;
	m->used = (unsigned long long)state_now().used;
	m->free = m->total > m->used ? m->total - m->used : 0;
	return NVML_SUCCESS;
}

#ifndef FAKE_NVML_OLD
nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	CHECK_DEVICE(d, mj, "energy");
	advance_energy();
	pthread_mutex_lock(&mu);
	*mj = (unsigned long long)d->energy_mj;
	pthread_mutex_unlock(&mu);
	return NVML_SUCCESS;
}
#endif
