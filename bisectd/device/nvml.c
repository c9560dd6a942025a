/*
 * nvml.c: the NVML backend (see device.h), loaded with dlopen() so that
 * bisectd neither needs NVIDIA's headers to build nor the driver to run.
 * The types and signatures below are NVML's as its reference documents
 * them; only the symbols used here are looked up, and every one but
 * initialisation and the device handles may be missing (an older driver)
 * or answer NVML_ERROR_NOT_SUPPORTED: that field is then unknown.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "device.h"

/* ---- NVML's declarations (nvml.h) ---- */
typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0

struct nvml {
	void *lib;
	nvmlDevice_t dev[DEVICE_MAX];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*index)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*vbios)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*driver)(char *, unsigned int);
	nvmlReturn_t (*cuda)(int *);
	nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*persistence)(nvmlDevice_t, int *);
	nvmlReturn_t (*mig)(nvmlDevice_t, unsigned int *, unsigned int *);
	nvmlReturn_t (*ecc)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*app_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*default_app_clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
};

/* The first of the names the library has (a newer name first), or
 * NULL. */
static void *
sym(void *lib, const char *name, const char *older)
{
	void *p = dlsym(lib, name);

	if (p == NULL && older != NULL)
		p = dlsym(lib, older);
	return p;
}

#define LOAD(field, name, older) \
	(*(void **)&n->field = sym(n->lib, name, older))

static void
load_symbols(struct nvml *n)
{
	LOAD(init, "nvmlInit_v2", "nvmlInit");
	LOAD(shutdown, "nvmlShutdown", NULL);
	LOAD(error_string, "nvmlErrorString", NULL);
	LOAD(count, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount");
	LOAD(by_index, "nvmlDeviceGetHandleByIndex_v2",
	    "nvmlDeviceGetHandleByIndex");
	LOAD(by_uuid, "nvmlDeviceGetHandleByUUID", NULL);
	LOAD(index, "nvmlDeviceGetIndex", NULL);
	LOAD(name, "nvmlDeviceGetName", NULL);
	LOAD(uuid, "nvmlDeviceGetUUID", NULL);
	LOAD(vbios, "nvmlDeviceGetVbiosVersion", NULL);
	LOAD(driver, "nvmlSystemGetDriverVersion", NULL);
	LOAD(cuda, "nvmlSystemGetCudaDriverVersion_v2",
	    "nvmlSystemGetCudaDriverVersion");
	LOAD(power_limit, "nvmlDeviceGetPowerManagementLimit", NULL);
	LOAD(persistence, "nvmlDeviceGetPersistenceMode", NULL);
	LOAD(mig, "nvmlDeviceGetMigMode", NULL);
	LOAD(ecc, "nvmlDeviceGetEccMode", NULL);
	LOAD(app_clock, "nvmlDeviceGetApplicationsClock", NULL);
	LOAD(default_app_clock, "nvmlDeviceGetDefaultApplicationsClock", NULL);
	LOAD(clock, "nvmlDeviceGetClockInfo", NULL);
	LOAD(temperature, "nvmlDeviceGetTemperature", NULL);
	LOAD(power, "nvmlDeviceGetPowerUsage", NULL);
	LOAD(utilization, "nvmlDeviceGetUtilizationRates", NULL);
	/* Renamed in driver 535; the old name stays exported. */
	LOAD(reasons, "nvmlDeviceGetCurrentClocksEventReasons",
	    "nvmlDeviceGetCurrentClocksThrottleReasons");
	LOAD(memory, "nvmlDeviceGetMemoryInfo", NULL);
	LOAD(energy, "nvmlDeviceGetTotalEnergyConsumption", NULL);
}

static void
nvml_close(void *h)
{
	struct nvml *n = h;

	if (n == NULL)
		return;
	if (n->shutdown)
		n->shutdown();
	dlclose(n->lib);
	free(n);
}

static int
nvml_open(const char *library, void **h, struct err *e)
{
	struct nvml *n;
	nvmlReturn_t rc;

	*h = NULL;
	if ((n = calloc(1, sizeof(*n))) == NULL)
		return err_set(e, "out of memory");
	if ((n->lib = dlopen(library, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		err_set(e, "cannot load %s: %s", library, dlerror());
		free(n);
		return -1;
	}
	load_symbols(n);
	if (n->init == NULL || n->count == NULL || n->by_index == NULL) {
		err_set(e, "%s is not NVML: it has no nvmlInit_v2, "
		    "nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2",
		    library);
		dlclose(n->lib);
		free(n);
		return -1;
	}
	if ((rc = n->init()) != NVML_SUCCESS) {
		err_set(e, "%s: nvmlInit failed: %s (%d)", library,
		    n->error_string ? n->error_string(rc) : "error", rc);
		dlclose(n->lib);
		free(n);
		return -1;
	}
	*h = n;
	return 0;
}

/* A string field: "" unless the symbol is there and answers. */
static void
text_of(nvmlReturn_t (*fn)(nvmlDevice_t, char *, unsigned int),
    nvmlDevice_t d, char *out, size_t len)
{
	out[0] = '\0';
	if (fn == NULL || fn(d, out, (unsigned int)len) != NVML_SUCCESS)
		out[0] = '\0';
	out[len - 1] = '\0';
}

/* A clock of a getter taking a clock type: MHz, or -1. */
static int
clock_of(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned int *),
    nvmlDevice_t d, int type)
{
	unsigned int v;

	return fn != NULL && fn(d, type, &v) == NVML_SUCCESS ? (int)v : -1;
}

static void
identify(struct nvml *n, nvmlDevice_t d, struct device_identity *id)
{
	unsigned int u, pending;
	unsigned long long reasons;
	int v, vp, cv;

	text_of(n->name, d, id->model, sizeof(id->model));
	text_of(n->uuid, d, id->uuid, sizeof(id->uuid));
	text_of(n->vbios, d, id->vbios, sizeof(id->vbios));
	id->driver[0] = id->cuda[0] = '\0';
	if (n->driver && n->driver(id->driver, sizeof(id->driver)) !=
	    NVML_SUCCESS)
		id->driver[0] = '\0';
	id->driver[sizeof(id->driver) - 1] = '\0';
	if (n->cuda && n->cuda(&cv) == NVML_SUCCESS)
		snprintf(id->cuda, sizeof(id->cuda), "%d.%d", cv / 1000,
		    cv % 1000 / 10);
	id->power_limit_mw = n->power_limit && n->power_limit(d, &u) ==
	    NVML_SUCCESS ? (int64_t)u : -1;
	id->persistence = n->persistence && n->persistence(d, &v) ==
	    NVML_SUCCESS ? v != 0 : -1;
	id->mig = n->mig && n->mig(d, &u, &pending) == NVML_SUCCESS ?
	    u != 0 : -1;
	id->ecc = n->ecc && n->ecc(d, &v, &vp) == NVML_SUCCESS ? v != 0 : -1;
	id->app_sm_mhz = clock_of(n->app_clock, d, NVML_CLOCK_SM);
	id->app_mem_mhz = clock_of(n->app_clock, d, NVML_CLOCK_MEM);
	id->default_sm_mhz = clock_of(n->default_app_clock, d, NVML_CLOCK_SM);
	id->default_mem_mhz = clock_of(n->default_app_clock, d,
	    NVML_CLOCK_MEM);
	/* NVML has no getter for clocks locked with nvidia-smi -lgc; what
	 * shows them is the clocks held by their setting. */
	id->clocks_locked = -1;
	if (id->app_sm_mhz >= 0 && id->default_sm_mhz >= 0)
		id->clocks_locked = id->app_sm_mhz != id->default_sm_mhz ||
		    id->app_mem_mhz != id->default_mem_mhz;
	if (n->reasons && n->reasons(d, &reasons) == NVML_SUCCESS) {
		if (reasons & DEVICE_THR_APP_CLOCKS)
			id->clocks_locked = 1;
		else if (id->clocks_locked < 0)
			id->clocks_locked = 0;
	}
}

/* Device handle of one CUDA_VISIBLE_DEVICES entry: 0, or -1 (CUDA
 * ignores it and every entry after it). */
static int
handle_of(struct nvml *n, int idx, const char *uuid, unsigned int count,
    nvmlDevice_t *d, unsigned int *index)
{
	if (uuid != NULL) {
		if (n->by_uuid == NULL || n->by_uuid(uuid, d) != NVML_SUCCESS)
			return -1;
		if (n->index == NULL || n->index(*d, index) != NVML_SUCCESS)
			*index = 0;
		return 0;
	}
	if ((unsigned int)idx >= count || n->by_index((unsigned int)idx, d) !=
	    NVML_SUCCESS)
		return -1;
	*index = (unsigned int)idx;
	return 0;
}

static int
nvml_list(void *h, const char *visible, struct device_identity *ids,
    size_t max, size_t *count, struct err *e)
{
	struct nvml *n = h;
	unsigned int total = 0, index;
	int idx[DEVICE_MAX];
	const char *uuids[DEVICE_MAX];
	char buf[1024];
	size_t want;
	nvmlReturn_t rc;

	*count = 0;
	if ((rc = n->count(&total)) != NVML_SUCCESS)
		return err_set(e, "nvmlDeviceGetCount: %s (%d)",
		    n->error_string ? n->error_string(rc) : "error", rc);
	if (max > DEVICE_MAX)
		max = DEVICE_MAX;
	if (visible == NULL) {
		want = total < max ? total : max;
		for (size_t i = 0; i < want; i++) {
			idx[i] = (int)i;
			uuids[i] = NULL;
		}
	} else
		want = device_parse_visible(visible, buf, sizeof(buf), idx,
		    uuids, max);
	for (size_t i = 0; i < want; i++) {
		nvmlDevice_t d;

		if (handle_of(n, idx[i], uuids[i], total, &d, &index) < 0)
			break;
		n->dev[*count] = d;
		memset(&ids[*count], 0, sizeof(ids[*count]));
		ids[*count].index = (int)index;
		identify(n, d, &ids[*count]);
		(*count)++;
	}
	return 0;
}

static int
nvml_sample(void *h, size_t slot, struct device_sample *s)
{
	struct nvml *n = h;
	nvmlDevice_t d = n->dev[slot];
	nvmlUtilization_t u;
	nvmlMemory_t m;
	unsigned long long v;
	unsigned int x;

	s->sm_mhz = clock_of(n->clock, d, NVML_CLOCK_SM);
	s->mem_mhz = clock_of(n->clock, d, NVML_CLOCK_MEM);
	s->temp_c = clock_of(n->temperature, d, NVML_TEMPERATURE_GPU);
	if (n->power && n->power(d, &x) == NVML_SUCCESS)
		s->power_mw = x;
	if (n->utilization && n->utilization(d, &u) == NVML_SUCCESS)
		s->util_pct = (int)u.gpu;
	if (n->reasons && n->reasons(d, &v) == NVML_SUCCESS) {
		s->throttle = v;
		s->throttle_known = 1;
	}
	if (n->memory && n->memory(d, &m) == NVML_SUCCESS)
		s->mem_used = (int64_t)m.used;
	if (n->energy && n->energy(d, &v) == NVML_SUCCESS)
		s->energy_mj = (int64_t)v;
	return 0;
}

const struct device_backend device_nvml = {
	"nvml", nvml_open, nvml_list, nvml_sample, nvml_close
};
