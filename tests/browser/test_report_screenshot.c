/*
 * test_report_screenshot.c: the demo's HTML report (written by test_e2e
 * into the build folder) as a browser draws it.  Headless Chromium takes
 * one screenshot, kept as BUILD/report-demo.png; netpbm's pngtopnm turns
 * it into a PPM this test reads.  The page must not be blank, and the
 * plots must have drawn: the time plot's two colours (last good blue,
 * first bad red) are used by nothing but the plots' dots, lines and
 * bands.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int
main(void)
{
	const char *build = getenv("BISECTD_BUILD_DIR");
	char page[4096], png[4096], cmd[16384];
	struct check_image im;
	long ink, total, blue, red;

	if (build == NULL) {
		fprintf(stderr, "BISECTD_BUILD_DIR must be set\n");
		return 1;
	}
	check_tmpdir("report_screenshot");
	if (!check_tool("chromium", "chromium") ||
	    !check_tool("pngtopnm", "netpbm"))
		return check_done();
	snprintf(page, sizeof(page), "%s/report-demo.html", build);
	snprintf(png, sizeof(png), "%s/report-demo.png", build);
	remove(png);
	/* The verdict, the reproduce lines and the time plot fit in 900 x
	 * 2000 CSS pixels.  Chromium wants a writable HOME for its profile;
	 * the timeout is generous, a loaded machine starts it slowly. */
	snprintf(cmd, sizeof(cmd), "HOME=$PWD timeout 300 chromium --headless "
	    "--no-sandbox --disable-gpu --hide-scrollbars "
	    "--user-data-dir=$PWD/profile --window-size=900,2000 "
	    "--screenshot=%s file://%s >chromium.log 2>&1", png, page);
	CHECK_INT(check_run(cmd, NULL), 0);
	/* Text, the reproduce block's grey and the plots inked. */
	if (check_screenshot_read(png, &im, &ink, &total) < 0)
		return check_done();
	CHECK_INT(im.w, 900);
	CHECK_INT(im.h, 2000);
	blue = check_count_colour(&im, 0x1f, 0x5f, 0xa8, 40);
	red = check_count_colour(&im, 0xc0, 0x26, 0x1b, 40);
	/* Dozens of dots and a line across the plot each: hundreds of
	 * pixels; a plot that failed to draw leaves none. */
	CHECK(blue > 300);
	CHECK(red > 300);
	fprintf(stderr, "screenshot %s: %ld of %ld pixels inked, %ld blue, "
	    "%ld red\n", png, ink, total, blue, red);
	free(im.rgb);
	return check_done();
}
