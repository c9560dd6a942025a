/*
 * test_gpu.c: the GPUs through the fake NVML (tests/lib/fake-nvml.c):
 * CUDA_VISIBLE_DEVICES, the machine key and what changes it, a library
 * that lacks symbols or fields, then runs through the real bisectctl: the
 * runs during which the GPU throttled are flagged and no other, a
 * machine without NVML stores NULLs and says so once, a driver update
 * makes another machine and `runs` names its GPU fields.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "check.h"
#include "check_json.h"
#include "bisectd/device/device.h"
#include "bisectd/measure/hygiene.h"
#include "common/err.h"

static const char *ctl, *build;
static char fake[4096], fake_old[4096];

#define GPU_A "gpu model=\"NVIDIA H100 80GB HBM3\" uuid=GPU-aaaa " \
	"vbios=96.00.74.00.01 power-limit=700000 persistence=0 mig=0 " \
	"ecc=1 app-sm=1980 app-mem=2619 default-sm=1980 default-mem=2619\n"
#define GPU_B "gpu model=\"NVIDIA H100 80GB HBM3\" uuid=GPU-bbbb " \
	"vbios=96.00.74.00.01 power-limit=700000 persistence=1 mig=0 " \
	"ecc=1 app-sm=1755 app-mem=2619 default-sm=1980 default-mem=2619\n"
/* Idle between runs; phase N is the Nth run of wrap.sh. */
#define IDLE "at 0 sm=1980 mem=2619 temp=40 power=100000 util=0 " \
	"reasons=0x1 used=1000000000\n"

static void
script(const char *driver, const char *gpus, const char *more)
{
	char text[4096];

	snprintf(text, sizeof(text), "driver %s\ncuda 12040\n%s%s%s", driver,
	    gpus, IDLE, more);
	check_write_file("script", text);
}

/* The value of one SQL query on the store, as an integer; -1 if none. */
static long long
sql_int(const char *db, const char *q)
{
	sqlite3 *h;
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_prepare_v2(h, q, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_type(st, 0) != SQLITE_NULL)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	} else
		fprintf(stderr, "%s: %s\n", q, sqlite3_errmsg(h));
	sqlite3_close(h);
	return v;
}

static void
test_visible(void)
{
	char buf[256];
	int idx[8];
	const char *uuids[8];

	CHECK_INT(device_parse_visible("1, 0", buf, sizeof(buf), idx, uuids,
	    8), 2);
	CHECK_INT(idx[0], 1);
	CHECK_INT(idx[1], 0);
	CHECK_INT(device_parse_visible("GPU-bbbb,0", buf, sizeof(buf), idx,
	    uuids, 8), 2);
	CHECK_INT(idx[0], -1);
	CHECK_STR(uuids[0], "GPU-bbbb");
	/* CUDA stops at the first entry it cannot read. */
	CHECK_INT(device_parse_visible("0,-1,1", buf, sizeof(buf), idx, uuids,
	    8), 1);
	CHECK_INT(device_parse_visible("0,x,1", buf, sizeof(buf), idx, uuids,
	    8), 1);
	CHECK_INT(device_parse_visible("", buf, sizeof(buf), idx, uuids, 8),
	    0);
	CHECK_STR(device_throttle_names(0x21, buf, sizeof(buf)),
	    "idle,sw-thermal");
	CHECK_STR(device_throttle_names(0, buf, sizeof(buf)), "none");
}

/* The devices the fake shows under CUDA_VISIBLE_DEVICES = visible. */
static size_t
open_visible(const char *visible, struct device_set *d)
{
	struct err e = ERR_INIT;

	if (visible)
		setenv("CUDA_VISIBLE_DEVICES", visible, 1);
	else
		unsetenv("CUDA_VISIBLE_DEVICES");
	CHECK_INT(device_open(d, &e), 0);
	return d->n;
}

static void
test_devices(void)
{
	struct device_set d;
	struct device_sample s;

	setenv(DEVICE_NVML_ENV, fake, 1);
	script("550.54.15", GPU_A GPU_B, "");
	CHECK_INT(open_visible(NULL, &d), 2);
	CHECK_STR(d.id[0].model, "NVIDIA H100 80GB HBM3");
	CHECK_STR(d.id[0].driver, "550.54.15");
	CHECK_STR(d.id[0].cuda, "12.4");
	CHECK_STR(d.id[1].uuid, "GPU-bbbb");
	CHECK_INT(d.id[0].power_limit_mw, 700000);
	CHECK_INT(d.id[0].persistence, 0);
	CHECK_INT(d.id[0].mig, 0);
	CHECK_INT(d.id[0].ecc, 1);
	/* Idle at the default clocks: not locked; application clocks set
	 * below the default: locked. */
	CHECK_INT(d.id[0].clocks_locked, 0);
	CHECK_INT(d.id[1].clocks_locked, 1);
	CHECK_INT(device_sample(&d, 1, &s), 0);
	CHECK_INT(s.sm_mhz, 1980);
	CHECK_INT(s.temp_c, 40);
	CHECK_INT(s.mem_used, 1000000000);
	CHECK_INT(s.throttle_known, 1);
	CHECK(s.energy_mj > 0);
	device_close(&d);
	CHECK_INT(open_visible("GPU-bbbb", &d), 1);
	CHECK_INT(d.id[0].index, 1);
	device_close(&d);
	CHECK_INT(open_visible("1,7,0", &d), 1);	/* 7: none, stop */
	CHECK_INT(d.id[0].index, 1);
	device_close(&d);
	CHECK_INT(open_visible("", &d), 0);
	device_close(&d);
	unsetenv("CUDA_VISIBLE_DEVICES");

	/* Values over time since nvmlInit: each reading is live. */
	script("550.54.15", GPU_A, "at 0.3 sm=1500 reasons=0x8\n");
	CHECK_INT(open_visible(NULL, &d), 1);
	CHECK_INT(device_sample(&d, 0, &s), 0);
	CHECK_INT(s.sm_mhz, 1980);
	check_sleep_ms(400);
	CHECK_INT(device_sample(&d, 0, &s), 0);
	CHECK_INT(s.sm_mhz, 1500);
	CHECK_INT(s.throttle, DEVICE_THR_HW_SLOWDOWN);
	device_close(&d);

	/* A field the device does not support, and an older driver's
	 * library without the energy counter, MIG or the new name of the
	 * clock event reasons: unknown, the rest still read. */
	script("550.54.15", GPU_A, "unsupported power vbios\n");
	CHECK_INT(open_visible(NULL, &d), 1);
	CHECK_STR(d.id[0].vbios, "");
	CHECK_INT(device_sample(&d, 0, &s), 0);
	CHECK_INT(s.power_mw, -1);
	CHECK_INT(s.sm_mhz, 1980);
	device_close(&d);
	setenv(DEVICE_NVML_ENV, fake_old, 1);
	CHECK_INT(open_visible(NULL, &d), 1);
	CHECK_INT(d.id[0].mig, -1);
	CHECK_INT(device_sample(&d, 0, &s), 0);
	CHECK_INT(s.energy_mj, -1);
	CHECK_INT(s.throttle_known, 1);	/* by the old name */
	device_close(&d);
	setenv(DEVICE_NVML_ENV, fake, 1);
}

static void
test_machine_key(void)
{
	struct machine a, b, none;
	struct err e = ERR_INIT;
	char text[8192];

	setenv(DEVICE_NVML_ENV, fake, 1);
	script("550.54.15", GPU_A, "");
	CHECK_INT(hygiene_machine(NULL, &a, &e), 0);
	CHECK_INT(a.ngpus, 1);
	CHECK_STR(a.gpu_note, "");
	CHECK_CONTAINS(hygiene_hw_text(&a, text, sizeof(text)),
	    "gpu0=index:0 model:NVIDIA H100 80GB HBM3 uuid:GPU-aaaa "
	    "driver:550.54.15 cuda:12.4 vbios:96.00.74.00.01 "
	    "power_limit_mw:700000 persistence:0 mig:0 ecc:1 "
	    "app_clocks:1980,2619 default_clocks:1980,2619\n");
	CHECK_CONTAINS(hygiene_gpu_advice(&a, text, sizeof(text)),
	    "nvidia-smi -i 0 -lgc MIN,MAX");
	CHECK_CONTAINS(text, "nvidia-smi -i 0 -pm 1");
	/* The same machine read again is the same key. */
	CHECK_INT(hygiene_machine(NULL, &b, &e), 0);
	CHECK_STR(a.hw_key, b.hw_key);
	/* A driver update is another machine. */
	script("555.42.02", GPU_A, "");
	CHECK_INT(hygiene_machine(NULL, &b, &e), 0);
	CHECK(strcmp(a.hw_key, b.hw_key) != 0);
	/* Persistence on and clocks locked: no advice. */
	script("550.54.15", GPU_B, "");
	CHECK_INT(hygiene_machine(NULL, &b, &e), 0);
	CHECK_STR(hygiene_gpu_advice(&b, text, sizeof(text)), "");
	/* No library: no GPU, why, and the key of a machine without. */
	setenv(DEVICE_NVML_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
	CHECK_INT(hygiene_machine(NULL, &none, &e), 0);
	CHECK_INT(none.ngpus, 0);
	CHECK_CONTAINS(none.gpu_note, "cannot load /nonexistent/");
	CHECK(strcmp(none.hw_key, a.hw_key) != 0);
	CHECK(strstr(hygiene_hw_text(&none, text, sizeof(text)), "gpu") ==
	    NULL);
	/* A library that is there but no driver. */
	setenv(DEVICE_NVML_ENV, fake, 1);
	check_write_file("script", "no-driver\n");
	CHECK_INT(hygiene_machine(NULL, &none, &e), 0);
	CHECK_CONTAINS(none.gpu_note, "Driver Not Loaded");
}

/* The configuration of the runs into db, the engine started by
 * wrap.sh with the release's version first. */
static void
write_config(const char *db)
{
	char text[4096], cwd[2048];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		cwd[0] = '\0';
	snprintf(text, sizeof(text),
	    "[bisectd]\n\tdatabase = %s\n\tcache = cache\n"
	    "\tmax-busy = 100%%\n"
	    "[weights \"demo\"]\n\tpath = %s/demo/weights.bin\n"
	    "[engine \"basert\"]\n\tsource = dir:%s/tests/demo-cpu\n"
	    "\tasset = basert-{version}.tar.gz\n"
	    "\tcommand = /bin/sh %s/wrap.sh {version} {bin}/bin/fake-engine -m "
	    "{weights} -p {prompt} -n {gen} -t 1 -r 1 -o json\n"
	    "\tparser = llama-bench\n\tprompts = 128,512\n\tgen = 16\n"
	    "\treps = 3\n\twarmup = 0\n\ttimeout = 1m\n", db, build, build,
	    cwd);
	check_write_file("t.conf", text);
	/* Each run is a phase of the fake's script for as long as it
	 * lasts (0.3 s at least: a few readings), and the GPU is idle
	 * again before the run ends. */
	check_write_file("wrap.sh", "shift; n=$(cat count 2>/dev/null || "
	    "echo 0)\nn=$((n + 1)); echo $n > count; echo $n > phase\n"
	    "sleep 0.3; \"$@\"; rc=$?; echo 0 > phase; exit $rc\n");
	check_write_file("count", "0\n");
}

static int
bench(const char *version, char **out)
{
	char args[256];

	snprintf(args, sizeof(args), "-c t.conf bench basert %s", version);
	return check_ctl_run(ctl, args, out);
}

static void
test_throttled_runs(void)
{
	char *out = NULL, *err;

	setenv(DEVICE_NVML_ENV, fake, 1);
	write_config("throttle.db");
	/* Runs 2 and 5 throttle (thermal, then power cap), run 7 is held
	 * by its application clocks, which is no throttling. */
	script("550.54.15", GPU_A,
	    "phase 1 util=95 power=400000 used=3000000000\n"
	    "phase 2 util=95 power=650000 sm=1400 temp=88 reasons=0x20\n"
	    "phase 3 util=95 power=400000\n"
	    "phase 5 util=95 power=700000 sm=1500 reasons=0x4\n"
	    "phase 7 util=95 reasons=0x2\n");
	CHECK_INT(bench("0.2.3", &out), 0);
	free(out);
	CHECK_INT(sql_int("throttle.db", "SELECT count(*) FROM run"), 9);
	CHECK_INT(sql_int("throttle.db", "SELECT count(*) FROM run WHERE "
	    "throttled = 1 AND id IN (2, 5)"), 2);
	CHECK_INT(sql_int("throttle.db", "SELECT count(*) FROM run WHERE "
	    "throttled = 1"), 2);
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_throttle & 0x20 FROM run "
	    "WHERE id = 2"), 0x20);
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_throttle & 0x2 FROM run "
	    "WHERE id = 7"), 0x2);
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_sm_mhz FROM run "
	    "WHERE id = 2"), 1400);
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_temp_max_c FROM run "
	    "WHERE id = 2"), 88);
	/* 2 GB above the 1 GB in use before run 1. */
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_mem_peak FROM run "
	    "WHERE id = 1"), 2000000000);
	CHECK_INT(sql_int("throttle.db", "SELECT count(*) FROM run WHERE "
	    "gpu_samples >= 2 AND gpu_energy_j > 0"), 9);
	/* A run at 400 W for 0.3 s and more: 120 J at least, where idle
	 * (100 W) would give 30 J; a mean power above idle's, however
	 * many idle readings a slow start adds. */
	CHECK(sql_int("throttle.db", "SELECT gpu_energy_j FROM run WHERE "
	    "id = 3") >= 100);
	CHECK(sql_int("throttle.db", "SELECT gpu_power_w FROM run WHERE "
	    "id = 3") > 150);
	CHECK_INT(sql_int("throttle.db", "SELECT gpu_power_w FROM run WHERE "
	    "id = 4"), 100);
	/* The hygiene advice, once. */
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, "hygiene: GPU 0 (NVIDIA H100 80GB HBM3): clocks "
	    "are not locked");
	CHECK_CONTAINS(err, "`nvidia-smi -i 0 -pm 1`");
	free(err);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf runs basert 0.2.3", &out), 0);
	CHECK_CONTAINS(out, "gpu: sm 1400 MHz, mem 2619 MHz, max 88 C");
	CHECK_CONTAINS(out, "reasons idle,sw-thermal, THROTTLED");
	CHECK_CONTAINS(out, "reasons idle,sw-power-cap, THROTTLED");
	CHECK_CONTAINS(out, "reasons idle,app-clocks (");
	CHECK_CONTAINS(out, "machine 1 gpu 0: NVIDIA H100 80GB HBM3, "
	    "GPU-aaaa, driver 550.54.15, CUDA 12.4, VBIOS 96.00.74.00.01, "
	    "power limit 700 W, persistence off, MIG off, ECC on");
	free(out);

	/* The older driver's library: throttling still seen, no energy. */
	setenv(DEVICE_NVML_ENV, fake_old, 1);
	write_config("old.db");
	CHECK_INT(bench("0.2.3", &out), 0);
	free(out);
	CHECK_INT(sql_int("old.db", "SELECT count(*) FROM run WHERE "
	    "throttled = 1 AND id IN (2, 5)"), 2);
	CHECK_INT(sql_int("old.db", "SELECT count(*) FROM run WHERE "
	    "gpu_energy_j IS NULL AND gpu_sm_mhz > 0"), 9);
	setenv(DEVICE_NVML_ENV, fake, 1);
}

static void
test_no_nvml(void)
{
	char *out = NULL, *err;
	const char *line = "hygiene: no GPU state: cannot load "
	    "/nonexistent/libnvidia-ml.so.1";

	setenv(DEVICE_NVML_ENV, "/nonexistent/libnvidia-ml.so.1", 1);
	write_config("none.db");
	CHECK_INT(bench("0.2.3", &out), 0);
	free(out);
	err = check_read_file("stderr.txt");
	CHECK_CONTAINS(err, line);
	CHECK(err && strstr(strstr(err, line) + 1, line) == NULL);
	free(err);
	CHECK_INT(sql_int("none.db", "SELECT count(*) FROM run WHERE "
	    "failure IS NULL"), 9);
	CHECK_INT(sql_int("none.db", "SELECT count(*) FROM run WHERE "
	    "gpu_samples IS NULL AND gpu_sm_mhz IS NULL AND gpu_mem_mhz IS "
	    "NULL AND gpu_temp_max_c IS NULL AND gpu_power_w IS NULL AND "
	    "gpu_util_pct IS NULL AND gpu_throttle IS NULL AND gpu_mem_peak "
	    "IS NULL AND gpu_energy_j IS NULL AND throttled = 0"), 9);
	CHECK_INT(sql_int("none.db", "SELECT count(*) FROM machine_gpu"), 0);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf runs basert 0.2.3", &out), 0);
	CHECK(out && strstr(out, "gpu:") == NULL);
	free(out);
	setenv(DEVICE_NVML_ENV, fake, 1);
}

static void
test_driver_change(void)
{
	char *out = NULL;

	setenv(DEVICE_NVML_ENV, fake, 1);
	write_config("driver.db");
	script("550.54.15", GPU_A, "");
	CHECK_INT(bench("0.2.3", &out), 0);
	free(out);
	script("555.42.02", GPU_A, "");
	CHECK_INT(bench("0.2.3", &out), 0);
	free(out);
	CHECK_INT(sql_int("driver.db", "SELECT count(DISTINCT hw_key) FROM "
	    "machine"), 2);
	CHECK_INT(sql_int("driver.db", "SELECT count(DISTINCT machine_id) "
	    "FROM run"), 2);
	/* Each bench measured under its own key: nothing was reused. */
	CHECK_INT(sql_int("driver.db", "SELECT count(*) FROM run"), 18);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf runs basert 0.2.3", &out), 0);
	CHECK_CONTAINS(out, "machine 1 gpu 0: NVIDIA H100 80GB HBM3, "
	    "GPU-aaaa, driver 550.54.15, CUDA 12.4");
	CHECK_CONTAINS(out, "machine 2 gpu 0: NVIDIA H100 80GB HBM3, "
	    "GPU-aaaa, driver 555.42.02, CUDA 12.4");
	free(out);
}

/*
 * version on a GPU that throttles every nth run of each of its cells
 * (counted in count-CELL, the cell being the engine's arguments' CRC):
 * those runs see
 * the thermal slowdown (phase 99) and take three times as long per
 * prompt token, as at a lower clock.
 */
static void
throttle_every(const char *version, int nth)
{
	char text[4096], cwd[2048];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		cwd[0] = '\0';
	snprintf(text, sizeof(text), "v=$1; shift; if [ \"$v\" = %s ]; then\n"
	    "c=count-$(echo \"$*\" | cksum | cut -d' ' -f1)\n"
	    "k=$(cat $c 2>/dev/null || echo 0); k=$((k + 1))\n"
	    "echo $k > $c; if [ $((k %% %d)) = 0 ]; then\n"
	    "echo 99 > phase; sleep 0.3; \"$@\" --release %s/slow.conf\n"
	    "rc=$?; echo 0 > phase; exit $rc; fi; fi\n"
	    "sleep 0.3; exec \"$@\"\n", version, nth, cwd);
	check_write_file("wrap.sh", text);
	check_write_file("slow.conf", "version = 0.2.3\nbuild_number = 203\n"
	    "fixed_us = 16000\nprefill_us_per_token = 290\n"
	    "decode_us_per_token = 1000\nnoise_cv = 0.015\nclock = cpu\n");
	check_run("rm -f count-*", NULL);
	script("550.54.15", GPU_A, "phase 99 sm=1400 temp=88 reasons=0x20\n");
}

/* The analysed runs of a release: measured, not warm-ups; throttled
 * 0 or 1. */
static long long
release_runs(const char *db, const char *version, int prompt, int throttled)
{
	char q[512];

	snprintf(q, sizeof(q), "SELECT count(*) FROM run r JOIN release l ON "
	    "l.id = r.release_id WHERE l.version = '%s' AND r.kind = 'pp' AND "
	    "r.prompt_tokens = %d AND r.warmup = 0 AND r.failure IS NULL AND "
	    "r.confirm = 0 AND r.throttled = %d", version, prompt, throttled);
	return sql_int(db, q);
}

/*
 * Throttled runs left out of the analysis: 0.2.2 and 0.2.3 are one
 * build, and 0.2.3's throttled runs, three times slower per token, would
 * be a regression.  The bisect finds none, the report flags 0.2.3 and
 * counts its throttled runs, and its figures are its other runs'.
 */
static void
test_throttled_analysis(void)
{
	json_t *rep = NULL, *a, *b;
	const json_t *flags;
	long long left_out;
	double ms_a, ms_b;
	char *out = NULL;
	int seen = 0;

	setenv(DEVICE_NVML_ENV, fake, 1);
	write_config("analysis.db");
	throttle_every("0.2.3", 2);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf bisect --now basert "
	    "0.2.2..0.2.3", &out), 0);
	CHECK_CONTAINS(out, "verdict: no-regression");
	free(out);
	left_out = release_runs("analysis.db", "0.2.3", 512, 1);
	CHECK(left_out >= 2);
	CHECK(release_runs("analysis.db", "0.2.3", 512, 0) >= 3);
	CHECK_INT(release_runs("analysis.db", "0.2.2", 512, 1), 0);
	CHECK_INT(check_ctl_json(ctl, "-c t.conf report basert 0.2.2..0.2.3 "
	    "--format json", 0, &rep), 0);
	a = check_release(rep, "0.2.2");
	b = check_release(rep, "0.2.3");
	CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL) {
		json_decref(rep);
		return;
	}
	flags = json_object_get(b, "flags");
	for (size_t i = 0; i < json_array_size(flags); i++)
		seen |= strcmp(json_string_value(json_array_get(flags, i)),
		    "throttled") == 0;
	CHECK(seen);
	CHECK(json_object_get(a, "throttled_runs") == NULL);
	/* Every throttled run of 0.2.3's cells: pp128, pp512 and tg16. */
	CHECK_INT(json_integer_value(json_object_get(b, "throttled_runs")),
	    release_runs("analysis.db", "0.2.3", 128, 1) + left_out +
	    sql_int("analysis.db", "SELECT count(*) FROM run r JOIN release "
	    "l ON l.id = r.release_id WHERE l.version = '0.2.3' AND r.kind = "
	    "'tg' AND r.warmup = 0 AND r.failure IS NULL AND r.throttled = 1"));
	CHECK_INT(json_integer_value(json_object_get(json_object_get(
	    json_object_get(b, "pp"), "512"), "throttled_runs")), left_out);
	/* The figures are the other runs': n counts them, and the time is
	 * 0.2.2's (the same build) within 5%, where the throttled runs
	 * would add half of 200%. */
	CHECK_INT(json_integer_value(json_object_get(json_object_get(
	    json_object_get(b, "pp"), "512"), "n")),
	    release_runs("analysis.db", "0.2.3", 512, 0));
	ms_a = json_real_value(json_object_get(json_object_get(
	    json_object_get(a, "pp"), "512"), "ms"));
	ms_b = json_real_value(json_object_get(json_object_get(
	    json_object_get(b, "pp"), "512"), "ms"));
	CHECK(ms_a > 0 && fabs(ms_b / ms_a - 1) < 0.05);
	json_decref(rep);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf report basert 0.2.2..0.2.3",
	    &out), 0);
	CHECK_CONTAINS(out, "throttled");
	free(out);

	/* Every run throttled: the end cannot be measured, and the bisect
	 * says so instead of measuring it without end. */
	write_config("always.db");
	throttle_every("0.2.3", 1);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf bisect --now basert "
	    "0.2.2..0.2.3", &out), 1);
	free(out);
	out = check_read_file("stderr.txt");
	CHECK_CONTAINS(out, "0.2.3: the GPU throttled during most of its "
	    "runs");
	free(out);
}

/* Each release's runs are phase 23 (0.2.3) or 24 (0.2.4) of the
 * fake's script. */
static void
phase_by_release(const char *phase23, const char *phase24)
{
	char text[1024];

	check_write_file("wrap.sh", "v=$1; shift; case $v in 0.2.3) p=23;; "
	    "0.2.4) p=24;; *) p=0;; esac\necho $p > phase; sleep 0.3; "
	    "\"$@\"; rc=$?; echo 0 > phase; exit $rc\n");
	snprintf(text, sizeof(text), "phase 23 util=95 power=400000 %s\n"
	    "phase 24 util=95 power=400000 %s\n", phase23, phase24);
	script("550.54.15", GPU_A, text);
}

/* The verdict of `bisect --now basert 0.2.3..0.2.4` (per-token 3.5x
 * slower at 0.2.4) into db, the releases' runs as phase_by_release()
 * has them, and the report's JSON. */
static json_t *
bisect_pair(const char *db, const char *phase23, const char *phase24)
{
	char *out = NULL;
	json_t *rep = NULL;

	write_config(db);
	phase_by_release(phase23, phase24);
	CHECK_INT(check_ctl_run(ctl, "-c t.conf bisect --now basert "
	    "0.2.3..0.2.4", &out), 3);
	free(out);
	CHECK_INT(check_ctl_json(ctl, "-c t.conf report basert 0.2.3..0.2.4 "
	    "--format json", 0, &rep), 3);
	return rep;
}

/* The report of the store t.conf names over 0.2.3..0.2.4 in format fmt
 * ("": text). */
static char *
report_of(const char *fmt)
{
	char args[256], *out = NULL;

	snprintf(args, sizeof(args), "-c t.conf report basert 0.2.3..0.2.4%s%s",
	    *fmt ? " --format " : "", fmt);
	CHECK_INT(check_ctl_run(ctl, args, &out), 3);
	return out;
}

/*
 * A 5% clock difference between the sides is named in the verdict and
 * blocks `confirmed`; equal clocks change nothing.  The GPU lines of
 * every format: 0.2.4 uses 25% more memory, named in "what else
 * changed".
 */
static void
test_clocks_memory(void)
{
	json_t *rep, *v, *c, *g, *x;
	char *out;
	size_t i;
	int named = 0;

	setenv(DEVICE_NVML_ENV, fake, 1);
	rep = bisect_pair("equal.db", "sm=1980", "sm=1980");
	v = json_object_get(rep, "verdict");
	c = json_object_get(v, "clocks");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "0.2.4");
	CHECK(json_is_true(json_object_get(v, "confirmed")));
	CHECK(json_is_false(json_object_get(c, "differ")));
	CHECK_NEAR(json_real_value(json_object_get(c, "good_sm_mhz")), 1980,
	    0.5);
	json_decref(rep);

	rep = bisect_pair("apart.db", "sm=1980 used=3000000000",
	    "sm=1881 used=3500000000");
	v = json_object_get(rep, "verdict");
	c = json_object_get(v, "clocks");
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "0.2.4");
	CHECK(json_is_false(json_object_get(v, "confirmed")));
	/* The reason says why it is not confirmed, not that it held. */
	CHECK_CONTAINS(json_string_value(json_object_get(v, "reason")),
	    "ran at GPU clocks more than 1% apart: not confirmed");
	CHECK(json_is_true(json_object_get(c, "differ")));
	CHECK_STR(json_string_value(json_object_get(c, "good")), "0.2.3");
	CHECK_STR(json_string_value(json_object_get(c, "bad")), "0.2.4");
	CHECK_NEAR(json_real_value(json_object_get(c, "good_sm_mhz")), 1980,
	    0.5);
	CHECK_NEAR(json_real_value(json_object_get(c, "bad_sm_mhz")), 1881,
	    0.5);
	/* Per release: the clock, the memory above the 1 GB idle, the
	 * energy of a prefill run at 400 W (0.3 s at least: 120 J). */
	g = json_object_get(check_release(rep, "0.2.4"), "gpu");
	CHECK_NEAR(json_real_value(json_object_get(g, "sm_mhz")), 1881, 0.5);
	CHECK_INT(json_integer_value(json_object_get(g, "mem_peak_bytes")),
	    2500000000LL);
	CHECK_INT(json_integer_value(json_object_get(g, "throttled_runs")), 0);
	x = json_object_get(json_object_get(g, "pp"), "512");
	CHECK(json_real_value(json_object_get(x, "energy_j")) >= 100);
	/*
	 * A median of ratios, not the ratio of the medians: the same for
	 * an odd number of runs, the mean of the two middle ratios for an
	 * even one, whose energies a loaded host sets apart (2.36 beside
	 * 2.25 seen).  Within 15%: a wrong unit or token count is not.
	 */
	CHECK_NEAR(json_real_value(json_object_get(x, "tokens_per_j")) /
	    (512 / json_real_value(json_object_get(x, "energy_j"))), 1, 0.15);
	CHECK(json_integer_value(json_object_get(x, "runs")) >= 3);
	json_array_foreach(json_object_get(rep, "what_else_changed"), i, x)
		if (strcmp(json_string_value(json_object_get(x, "metric")),
		    "gpu-memory") == 0) {
			named = 1;
			CHECK_NEAR(json_real_value(json_object_get(x,
			    "change")), 0.25, 1e-9);
			CHECK_STR(json_string_value(json_object_get(x,
			    "moved")), "slower");
		}
	CHECK(named);
	json_decref(rep);
	/* The memory as the metric searched: the change found is the 25%
	 * of memory, not the 3.5x of the time. */
	CHECK_INT(check_ctl_json(ctl, "-c t.conf bisect --now --metric "
	    "gpu-memory basert 0.2.3..0.2.4 --format json", 0, &rep), 3);
	v = json_object_get(rep, "verdict") ? json_object_get(rep, "verdict") :
	    rep;
	CHECK_STR(json_string_value(json_object_get(v, "first_bad")), "0.2.4");
	CHECK_NEAR(json_real_value(json_object_get(v, "metric_change")), 0.25,
	    0.01);
	json_decref(rep);
	out = NULL;
	CHECK_INT(check_ctl_run(ctl, "-c t.conf report --metric gpu-memory "
	    "basert 0.2.3..0.2.4", &out), 3);
	if (getenv("TEST_GPU_VERBOSE"))
		fprintf(stderr, "%s\n", out);
	free(out);
	out = report_of("");
	CHECK_CONTAINS(out, "GPU clocks: good 0.2.3 at 1980 MHz, bad 0.2.4 "
	    "at 1881 MHz (median SM clock of their runs): -5.0%, more than 1% "
	    "apart: two machines were compared, not confirmed");
	CHECK_CONTAINS(out, "\nGPU (median SM clock over the analysed runs");
	CHECK_CONTAINS(out, "  0.2.4: sm 1881 MHz (");
	CHECK_CONTAINS(out, "mem peak 2.33 GiB, pp128 ");
	CHECK_CONTAINS(out, "peak GPU memory");
	free(out);
	out = report_of("markdown");
	CHECK_CONTAINS(out, "GPU clocks: good 0.2.3 at 1980 MHz");
	CHECK_CONTAINS(out, "**GPU**");
	CHECK_CONTAINS(out, "- 0.2.3: sm 1980 MHz (");
	free(out);
	out = report_of("html");
	CHECK_CONTAINS(out, "<dt>GPU clocks</dt>");
	CHECK_CONTAINS(out, "<section id=\"gpu\">");
	CHECK_CONTAINS(out, "<tr><td>0.2.4</td><td>1881</td>");
	check_write_file("gpu.html", out ? out : "");
	CHECK_INT(check_run("xmllint --noout gpu.html", NULL), 0);
	free(out);
}

int
main(void)
{
	char dir[4096];

	check_env(&ctl, NULL, &build);
	snprintf(fake, sizeof(fake), "%s/tests/fake-nvml/libnvidia-ml.so.1",
	    build);
	snprintf(fake_old, sizeof(fake_old),
	    "%s/tests/fake-nvml-old/libnvidia-ml.so.1", build);
	snprintf(dir, sizeof(dir), "%s", check_tmpdir("gpu"));
	/* The fake reads its script and the run's phase from here. */
	setenv("FAKE_NVML_SCRIPT", "script", 1);
	setenv("FAKE_NVML_PHASE", "phase", 1);
	CHECK_CASE(test_visible);
	CHECK_CASE(test_devices);
	CHECK_CASE(test_machine_key);
	CHECK_CASE(test_throttled_runs);
	CHECK_CASE(test_no_nvml);
	CHECK_CASE(test_driver_change);
	CHECK_CASE(test_throttled_analysis);
	CHECK_CASE(test_clocks_memory);
	return check_done();
}
