/*
 * hygiene.c: CPU busy share from /proc/stat, the load average, the wait
 * for a quiet machine, and the machine's identity (see hygiene.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/err.h"
#include "hygiene.h"
#include "fetch/sha256.h"

#define STAT_HEAD 4096	/* the aggregate line comes first */

static void
sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

int
hygiene_parse_stat(const char *text, struct cpu_times *t)
{
	unsigned long long v[10];
	const char *p = text;
	char *end;
	int n, i;

	while (strncmp(p, "cpu ", 4) != 0) {
		if ((p = strchr(p, '\n')) == NULL)
			return -1;
		p++;
	}
	p += 4;
	for (n = 0; n < 10; n++) {
		while (*p == ' ')
			p++;
		if (*p < '0' || *p > '9')
			break;
		v[n] = strtoull(p, &end, 10);
		p = end;
	}
	if (n < 4)
		return -1;
	/* user nice system idle [iowait irq softirq steal [guest guest_nice]]:
	 * guest time is already counted in user and nice. */
	t->idle = v[3] + (n > 4 ? v[4] : 0);
	t->total = 0;
	for (i = 0; i < n && i < 8; i++)
		t->total += v[i];
	return 0;
}

double
hygiene_busy(const struct cpu_times *before, const struct cpu_times *after)
{
	uint64_t total, idle;

	if (after->total <= before->total || after->idle < before->idle)
		return 0;
	total = after->total - before->total;
	idle = after->idle - before->idle;
	if (idle >= total)
		return 0;
	return 1.0 - (double)idle / (double)total;
}

double
hygiene_busy_others(const struct cpu_times *before,
    const struct cpu_times *after, int64_t self_ns, long ticks_per_s)
{
	double total, busy;

	if (after->total <= before->total || after->idle < before->idle ||
	    ticks_per_s <= 0)
		return 0;
	total = (double)(after->total - before->total);
	busy = total - (double)(after->idle - before->idle);
	busy -= (double)self_ns * (double)ticks_per_s / 1e9;
	/* Ticks are sampled, rusage is not: the difference can go a tick
	 * or two past either end. */
	if (busy <= 0)
		return 0;
	return busy >= total ? 1 : busy / total;
}

static int
read_times(struct cpu_times *t, struct err *e)
{
	char buf[STAT_HEAD + 1];
	ssize_t n;
	int fd;

	if ((fd = open("/proc/stat", O_RDONLY | O_CLOEXEC)) < 0)
		return err_errno(e, "cannot open '/proc/stat'");
	do
		n = read(fd, buf, STAT_HEAD);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return err_errno(e, "cannot read '/proc/stat'");
	buf[n] = '\0';
	if (hygiene_parse_stat(buf, t) < 0)
		return err_set(e, "'/proc/stat' has no aggregate cpu line");
	return 0;
}

int
hygiene_sample(int64_t window_ms, struct hygiene_sample *s, struct err *e)
{
	struct cpu_times a, b;
	double load[1];
	int64_t t0;

	if (window_ms <= 0)
		window_ms = HYGIENE_WINDOW_MS;
	t0 = clock_now_ms();
	if (read_times(&a, e) < 0)
		return -1;
	sleep_ms(window_ms);
	if (read_times(&b, e) < 0)
		return -1;
	s->busy = hygiene_busy(&a, &b);
	s->window_ms = clock_now_ms() - t0;
	s->load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
	return 0;
}

int
hygiene_wait_quiet(double max_busy, int64_t max_wait_ms, int64_t window_ms,
    hygiene_wait_fn fn, void *arg, struct hygiene_sample *last, int *busy,
    struct err *e)
{
	int64_t start = clock_now_ms(), waited;

	*busy = 0;
	for (;;) {
		if (hygiene_sample(window_ms, last, e) < 0)
			return -1;
		if (max_busy >= 1 || last->busy < max_busy)
			return 0;
		waited = clock_now_ms() - start;
		if (waited >= max_wait_ms ||
		    (fn != NULL && fn(arg, last, waited) != 0)) {
			*busy = 1;
			return 0;
		}
	}
}

/* User and system time of this process and of its reaped children. */
static int64_t
self_cpu_ns(void)
{
	struct rusage self, kids;
	int64_t ns = 0;

	if (getrusage(RUSAGE_SELF, &self) == 0)
		ns += (int64_t)(self.ru_utime.tv_sec + self.ru_stime.tv_sec) *
		    1000000000LL + (int64_t)(self.ru_utime.tv_usec +
		    self.ru_stime.tv_usec) * 1000;
	if (getrusage(RUSAGE_CHILDREN, &kids) == 0)
		ns += (int64_t)(kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) *
		    1000000000LL + (int64_t)(kids.ru_utime.tv_usec +
		    kids.ru_stime.tv_usec) * 1000;
	return ns;
}

void
hygiene_watch_init(struct hygiene_watch *w)
{
	memset(w, 0, sizeof(*w));
	w->last.busy = w->last.load1 = -1;
}

/* Open a new window now. */
static int
watch_open(struct hygiene_watch *w, struct err *e)
{
	if (read_times(&w->at, e) < 0)
		return -1;
	w->self_ns = self_cpu_ns();
	w->opened_ms = clock_now_ms();
	return 0;
}

int
hygiene_watch_run(struct hygiene_watch *w, double max_busy,
    int64_t max_wait_ms, int64_t window_ms, hygiene_wait_fn fn, void *arg,
    struct hygiene_sample *last, int *busy, struct err *e)
{
	struct cpu_times now;
	int64_t t = clock_now_ms(), self;
	double load[1];

	*busy = 0;
	if (window_ms <= 0)
		window_ms = HYGIENE_WINDOW_MS;
	if (w->opened_ms == 0) {
		if (watch_open(w, e) < 0)
			return -1;
	} else if (t - w->opened_ms >= window_ms) {
		self = self_cpu_ns();
		if (read_times(&now, e) < 0)
			return -1;
		w->last.busy = hygiene_busy_others(&w->at, &now,
		    self - w->self_ns, sysconf(_SC_CLK_TCK));
		w->last.window_ms = t - w->opened_ms;
		w->last.load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
		w->at = now;
		w->self_ns = self;
		w->opened_ms = t;
	}
	*last = w->last;
	if (max_busy >= 1 || (w->last.busy >= 0 && w->last.busy < max_busy))
		return 0;
	if (max_wait_ms == 0) {
		*busy = w->last.busy >= 0;
		return 0;
	}
	if (hygiene_wait_quiet(max_busy, max_wait_ms, window_ms, fn, arg,
	    last, busy, e) < 0)
		return -1;
	w->last = *last;
	return watch_open(w, e);
}

/* ---- machine identity ---- */

/* Copy value into out, trimmed, runs of blanks collapsed to one space. */
static void
copy_clean(char *out, size_t len, const char *value)
{
	size_t n = 0;
	int blank = 0;

	for (; *value && n + 1 < len; value++) {
		if (*value == ' ' || *value == '\t' || *value == '\n' ||
		    *value == '\r') {
			blank = n > 0;
			continue;
		}
		if (blank && n + 2 < len)
			out[n++] = ' ';
		blank = 0;
		out[n++] = *value;
	}
	out[n] = '\0';
}

int
hygiene_cpu_flags(const char *cpuinfo, char *buf, size_t len)
{
	char *line = NULL, *colon, *v;
	size_t cap = 0;
	FILE *f;
	int rc = 1;

	if (len == 0)
		return 1;
	buf[0] = '\0';
	if ((f = fopen(cpuinfo ? cpuinfo : "/proc/cpuinfo", "re")) == NULL)
		return 1;
	while (rc == 1 && getline(&line, &cap, f) > 0) {
		if ((strncmp(line, "flags", 5) != 0 &&
		    strncmp(line, "Features", 8) != 0) ||
		    (colon = strchr(line, ':')) == NULL)
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		v[strcspn(v, "\n")] = '\0';
		snprintf(buf, len, "%s", v);
		rc = 0;
	}
	free(line);
	fclose(f);
	return rc;
}

/*
 * The CPU's name from a cpuinfo file: "model name" (x86, many others),
 * else the first of the keys other architectures use, else ARM's
 * implementer and part numbers.
 */
static void
read_cpu_model(const char *path, char *out, size_t len)
{
	static const char *const keys[] = {
		"model name", "cpu model", "Processor", "cpu", "uarch",
		"Model"
	};
	char found[6][256], impl[64] = "", part[64] = "";
	char line[1024], *colon, *key_end;
	size_t i, klen;
	FILE *f;

	memset(found, 0, sizeof(found));
	snprintf(out, len, "unknown");
	if ((f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if ((colon = strchr(line, ':')) == NULL)
			continue;
		key_end = colon;
		while (key_end > line && (key_end[-1] == ' ' ||
		    key_end[-1] == '\t'))
			key_end--;
		klen = (size_t)(key_end - line);
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strlen(keys[i]) == klen &&
			    strncmp(line, keys[i], klen) == 0 &&
			    found[i][0] == '\0')
				copy_clean(found[i], sizeof(found[i]),
				    colon + 1);
		if (klen == 15 && strncmp(line, "CPU implementer", 15) == 0 &&
		    impl[0] == '\0')
			copy_clean(impl, sizeof(impl), colon + 1);
		if (klen == 8 && strncmp(line, "CPU part", 8) == 0 &&
		    part[0] == '\0')
			copy_clean(part, sizeof(part), colon + 1);
	}
	fclose(f);
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		/* Boards name themselves in "Model"; a CPU name is better. */
		if (i == 5 && impl[0] != '\0')
			break;
		if (found[i][0] != '\0') {
			size_t n = strnlen(found[i], len - 1);

			memcpy(out, found[i], n);
			out[n] = '\0';
			return;
		}
	}
	if (impl[0] != '\0')
		snprintf(out, len, "implementer %s part %s", impl,
		    part[0] ? part : "unknown");
	else if (found[5][0] != '\0')
		snprintf(out, len, "%s", found[5]);
}

static int
read_mem_kb(const char *path, uint64_t *kb, struct err *e)
{
	char line[256];
	unsigned long long v;
	FILE *f;
	int found = 0;

	if ((f = fopen(path, "re")) == NULL)
		return err_errno(e, "cannot open '%s'", path);
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "MemTotal: %llu kB", &v) == 1)
			found = 1;
	fclose(f);
	if (!found)
		return err_set(e, "'%s' has no MemTotal line", path);
	*kb = v;
	return 0;
}

/* os-release's PRETTY_NAME, its shell-style quoting undone. */
static int
read_os(const char *path, char *out, size_t len)
{
	char line[1024], *v, *w;
	FILE *f;
	int found = 0;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "PRETTY_NAME=", 12) != 0)
			continue;
		v = line + 12;
		v[strcspn(v, "\n")] = '\0';
		if (*v == '"' || *v == '\'') {
			char q = *v++;

			for (w = v; *v && *v != q; v++) {
				if (q == '"' && *v == '\\' && v[1] != '\0')
					v++;
				*w++ = *v;
			}
			*w = '\0';
			v = line + 13;
		}
		copy_clean(out, len, v);
		found = out[0] != '\0';
	}
	fclose(f);
	return found ? 0 : -1;
}

const char *
hygiene_hw_text(const struct machine *m, char *buf, size_t len)
{
	size_t n;

	n = (size_t)snprintf(buf, len, "cpu=%s\ncores=%d\nmem_gib=%d\n"
	    "arch=%s\n", m->cpu_model, m->cores, m->mem_gib, m->arch);
	for (size_t i = 0; i < m->ngpus && n < len; i++) {
		const struct device_identity *g = &m->gpu[i];

		/* Whether clocks are locked is left out: it is read from
		 * what holds the clocks at the moment, which idling
		 * changes; the clocks set are in. */
		n += (size_t)snprintf(buf + n, len - n, "gpu%zu=index:%d "
		    "model:%s uuid:%s driver:%s cuda:%s vbios:%s "
		    "power_limit_mw:%lld persistence:%d mig:%d ecc:%d "
		    "app_clocks:%d,%d default_clocks:%d,%d\n", i, g->index,
		    g->model, g->uuid, g->driver, g->cuda, g->vbios,
		    (long long)g->power_limit_mw, g->persistence, g->mig,
		    g->ecc, g->app_sm_mhz, g->app_mem_mhz, g->default_sm_mhz,
		    g->default_mem_mhz);
	}
	return buf;
}

const char *
hygiene_gpu_advice(const struct machine *m, char *buf, size_t len)
{
	size_t n = 0;

	if (len == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; i < m->ngpus && n < len; i++) {
		const struct device_identity *g = &m->gpu[i];

		if (g->clocks_locked == 0)
			n += (size_t)snprintf(buf + n, len - n, "GPU %d (%s): "
			    "clocks are not locked, so they follow "
			    "temperature and power: lock them with "
			    "`nvidia-smi -i %d -lgc MIN,MAX` (MIN and MAX "
			    "in MHz from `nvidia-smi -q -d SUPPORTED_CLOCKS`)"
			    "\n", g->index, g->model, g->index);
		if (g->persistence == 0 && n < len)
			n += (size_t)snprintf(buf + n, len - n, "GPU %d (%s): "
			    "persistence mode is off, so the driver starts "
			    "cold for every run: turn it on with "
			    "`nvidia-smi -i %d -pm 1`\n", g->index, g->model,
			    g->index);
	}
	return buf;
}

/* The GPUs the engine can see, or why there is no GPU state. */
static void
read_gpus(struct machine *m)
{
	struct device_set d;
	struct err e = ERR_INIT;

	if (device_open(&d, &e) != 0) {
		snprintf(m->gpu_note, sizeof(m->gpu_note), "%s", e.msg);
		return;
	}
	m->ngpus = d.n;
	memcpy(m->gpu, d.id, d.n * sizeof(d.id[0]));
	device_close(&d);
}

int
hygiene_machine(const struct machine_sources *src, struct machine *m,
    struct err *e)
{
	static const struct machine_sources real = { NULL, NULL, NULL };
	struct utsname u;
	struct sha256_ctx c;
	char text[8192];
	long cores;

	if (src == NULL)
		src = &real;
	memset(m, 0, sizeof(*m));
	read_cpu_model(src->cpuinfo ? src->cpuinfo : "/proc/cpuinfo",
	    m->cpu_model, sizeof(m->cpu_model));
	cores = sysconf(_SC_NPROCESSORS_ONLN);
	m->cores = cores > 0 ? (int)cores : 0;
	if (read_mem_kb(src->meminfo ? src->meminfo : "/proc/meminfo",
	    &m->mem_kb, e) < 0)
		return -1;
	/* Rounded down, so the kernel reserving a few more kB after an
	 * update does not change the identity. */
	m->mem_gib = (int)(m->mem_kb / (1024 * 1024));
	if (uname(&u) < 0)
		return err_errno(e, "uname");
	snprintf(m->arch, sizeof(m->arch), "%s", u.machine);
	snprintf(m->kernel, sizeof(m->kernel), "%s", u.release);
	snprintf(m->hostname, sizeof(m->hostname), "%s", u.nodename);
	if (src->os_release != NULL) {
		if (read_os(src->os_release, m->os, sizeof(m->os)) < 0)
			snprintf(m->os, sizeof(m->os), "unknown");
	} else if (read_os("/etc/os-release", m->os, sizeof(m->os)) < 0 &&
	    read_os("/usr/lib/os-release", m->os, sizeof(m->os)) < 0)
		snprintf(m->os, sizeof(m->os), "unknown");
	read_gpus(m);

	hygiene_hw_text(m, text, sizeof(text));
	if (sha256_init(&c) < 0)
		return err_set(e, "cannot hash the machine's identity");
	if (sha256_update(&c, text, strlen(text)) < 0) {
		sha256_abort(&c);
		return err_set(e, "cannot hash the machine's identity");
	}
	if (sha256_final(&c, m->hw_key) < 0)
		return err_set(e, "cannot hash the machine's identity");
	return 0;
}
