/*
 * device.c: the devices of this machine through the one backend there is
 * today (see device.h), and CUDA_VISIBLE_DEVICES as CUDA reads it.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "device.h"

size_t
device_parse_visible(const char *visible, char *buf, size_t len, int *idx,
    const char **uuids, size_t max)
{
	char *p, *tok, *save = NULL;
	size_t n = 0;

	if (len == 0)
		return 0;
	snprintf(buf, len, "%s", visible);
	for (p = buf; (tok = strtok_r(p, ",", &save)) != NULL && n < max;
	    p = NULL) {
		char *end;
		long v;

		while (isspace((unsigned char)*tok))
			tok++;
		end = tok + strlen(tok);
		while (end > tok && isspace((unsigned char)end[-1]))
			*--end = '\0';
		if (strncmp(tok, "GPU-", 4) == 0 || strncmp(tok, "MIG-", 4) ==
		    0) {
			idx[n] = -1;
			uuids[n++] = tok;
			continue;
		}
		v = strtol(tok, &end, 10);
		/* CUDA stops at the first entry it cannot read, and a
		 * negative index hides the ones after it. */
		if (end == tok || *end != '\0' || v < 0 || v > 1 << 20)
			break;
		idx[n] = (int)v;
		uuids[n++] = NULL;
	}
	return n;
}

int
device_open(struct device_set *d, struct err *e)
{
	const char *lib = getenv(DEVICE_NVML_ENV);

	memset(d, 0, sizeof(*d));
	d->be = &device_nvml;
	if (lib == NULL || lib[0] == '\0')
		lib = DEVICE_NVML_DEFAULT;
	if (d->be->open(lib, &d->h, e) < 0) {
		d->be = NULL;
		return 1;
	}
	if (d->be->list(d->h, getenv("CUDA_VISIBLE_DEVICES"), d->id,
	    DEVICE_MAX, &d->n, e) < 0) {
		device_close(d);
		return 1;
	}
	return 0;
}

int
device_sample(struct device_set *d, size_t slot, struct device_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->sm_mhz = s->mem_mhz = s->temp_c = s->util_pct = -1;
	s->power_mw = s->mem_used = s->energy_mj = -1;
	if (d->be == NULL || slot >= d->n)
		return -1;
	return d->be->sample(d->h, slot, s);
}

void
device_close(struct device_set *d)
{
	if (d->be != NULL)
		d->be->close(d->h);
	d->be = NULL;
	d->h = NULL;
	d->n = 0;
}

const char *
device_throttle_names(uint64_t reasons, char *buf, size_t len)
{
	static const struct {
		uint64_t bit;
		const char *name;
	} names[] = {
		{ DEVICE_THR_IDLE, "idle" },
		{ DEVICE_THR_APP_CLOCKS, "app-clocks" },
		{ DEVICE_THR_SW_POWER, "sw-power-cap" },
		{ DEVICE_THR_HW_SLOWDOWN, "hw-slowdown" },
		{ DEVICE_THR_SYNC_BOOST, "sync-boost" },
		{ DEVICE_THR_SW_THERMAL, "sw-thermal" },
		{ DEVICE_THR_HW_THERMAL, "hw-thermal" },
		{ DEVICE_THR_HW_POWER_BRAKE, "hw-power-brake" },
	};
	size_t n = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((reasons & names[i].bit) && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s",
			    n ? "," : "", names[i].name);
	if (reasons & ~(uint64_t)0x1ff && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s0x%llx", n ? "," :
		    "", (unsigned long long)(reasons & ~(uint64_t)0x1ff));
	if (n == 0)
		snprintf(buf, len, "none");
	return buf;
}
