/*
 * device.h: the accelerators the engine runs on, read through a backend
 * loaded at run time (NVML today: nvml.c).  Nothing here links against a
 * vendor library: a machine without one has no devices, and the reason
 * is kept for the one line that says so.  The devices are those the
 * engine can see: CUDA_VISIBLE_DEVICES (indexes or UUIDs) of this
 * process's environment, as CUDA reads it, is respected.
 */
#ifndef BISECTD_DEVICE_H
#define BISECTD_DEVICE_H

#include <stddef.h>
#include <stdint.h>

struct err;

#define DEVICE_MAX 8		/* devices described and sampled */
#define DEVICE_SAMPLE_HZ 10	/* the sampling rate of a run (gpurun.c) */

/*
 * The environment variable naming the NVML library to load instead of
 * "libnvidia-ml.so.1" (a path, or a name the dynamic loader looks up).
 */
#define DEVICE_NVML_ENV "BISECTD_NVML_LIBRARY"
#define DEVICE_NVML_DEFAULT "libnvidia-ml.so.1"

/* The throttle (clock event) reasons, NVML's bits. */
#define DEVICE_THR_IDLE		0x001ULL
#define DEVICE_THR_APP_CLOCKS	0x002ULL	/* application or locked
						 * clocks hold it down */
#define DEVICE_THR_SW_POWER	0x004ULL
#define DEVICE_THR_HW_SLOWDOWN	0x008ULL
#define DEVICE_THR_SYNC_BOOST	0x010ULL
#define DEVICE_THR_SW_THERMAL	0x020ULL
#define DEVICE_THR_HW_THERMAL	0x040ULL
#define DEVICE_THR_HW_POWER_BRAKE 0x080ULL
/* The reasons that make a run "throttled": thermal, power cap, HW
 * slowdown.  Idle, application clocks and sync boost are the machine's
 * settings or its rest, not a measurement gone wrong. */
#define DEVICE_THR_THROTTLED (DEVICE_THR_SW_POWER | DEVICE_THR_HW_SLOWDOWN | \
	DEVICE_THR_SW_THERMAL | DEVICE_THR_HW_THERMAL | \
	DEVICE_THR_HW_POWER_BRAKE)

/*
 * What identifies a device: all of it goes into the machine's hardware
 * key.  Text fields are "" and numbers -1 where the device or its driver
 * does not say (NVML_ERROR_NOT_SUPPORTED, a symbol the library lacks).
 */
struct device_identity {
	int index;		/* the device's index on the machine */
	char model[96];
	char uuid[96];
	char driver[80];	/* the kernel driver's version */
	char cuda[16];		/* the CUDA version the driver supports */
	char vbios[64];
	int64_t power_limit_mw;
	int persistence;	/* 0 off, 1 on, -1 unknown */
	int mig;		/* MIG mode now: 0 off, 1 on, -1 unknown */
	int ecc;		/* ECC mode now: 0 off, 1 on, -1 unknown */
	int app_sm_mhz, app_mem_mhz;	/* application clocks now */
	int default_sm_mhz, default_mem_mhz;	/* and by default */
	int clocks_locked;	/* 1: application clocks set away from the
				 * default, or the clocks held by their
				 * setting when read; 0: not; -1 unknown */
};

/* One reading of a device; -1 (or 0 for the reasons) where not read. */
struct device_sample {
	int sm_mhz, mem_mhz;
	int temp_c;
	int64_t power_mw;
	int util_pct;
	uint64_t throttle;	/* DEVICE_THR_* bits */
	int throttle_known;
	int64_t mem_used;	/* bytes of device memory in use */
	int64_t energy_mj;	/* the total energy counter, mJ */
};

/*
 * One backend: a table of functions, one file each (nvml.c).  open()
 * returns 0 with *h set, or -1 with e saying why there are no devices
 * (no library, no driver); list() fills the devices of visible (a
 * CUDA_VISIBLE_DEVICES value, or NULL for all) into ids; sample() reads
 * device slot of the list; close() frees h.
 */
struct device_backend {
	const char *name;
	int (*open)(const char *library, void **h, struct err *e);
	int (*list)(void *h, const char *visible, struct device_identity *ids,
	    size_t max, size_t *n, struct err *e);
	int (*sample)(void *h, size_t slot, struct device_sample *s);
	void (*close)(void *h);
};

extern const struct device_backend device_nvml;

/* The devices this process sees, open for sampling. */
struct device_set {
	const struct device_backend *be;
	void *h;
	size_t n;
	struct device_identity id[DEVICE_MAX];
};

/*
 * Open the devices: 0 with d filled (n may be 0: a driver without a
 * device, or CUDA_VISIBLE_DEVICES empty), or 1 when there is no device
 * state at all, with why in e ("cannot load libnvidia-ml.so.1: ...").
 */
int device_open(struct device_set *d, struct err *e);

/* Read device slot of d into s: 0, or -1 when nothing could be read. */
int device_sample(struct device_set *d, size_t slot, struct device_sample *s);

void device_close(struct device_set *d);

/*
 * The devices CUDA_VISIBLE_DEVICES names, in its order, as CUDA reads
 * it: comma-separated indexes or UUIDs ("GPU-..."), up to the first entry
 * that is neither.  Fills up to max entries of idx (an index, or -1 for
 * a UUID, which uuids[i] then points at inside buf, where visible is
 * copied).  Returns the count; 0 for "" (no device).
 */
size_t device_parse_visible(const char *visible, char *buf, size_t len,
    int *idx, const char **uuids, size_t max);

/* "sw-power-cap,hw-slowdown,...", the names of the bits of reasons, into
 * buf ("none" for 0).  Returns buf. */
const char *device_throttle_names(uint64_t reasons, char *buf, size_t len);

#endif
