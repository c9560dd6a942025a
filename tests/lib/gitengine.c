/*
 * gitengine.c: the git repository of a small C engine the commit
 * bisection tests share (see gitengine.h).
 */
#include <stdio.h>

#include "check.h"
#include "gitengine.h"

/* The engine: CPU work per prompt token, timed by its own thread's CPU
 * clock, so a loaded machine does not blur the step. */
static const char *engine_head =
    "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n"
    "#include <time.h>\n";
static const char *engine_body =
    "static double cpu_ms(void) { struct timespec t;\n"
    "  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);\n"
    "  return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }\n"
    "int main(int argc, char **argv) { int p = 0;\n"
    "  for (int i = 1; i + 1 < argc; i++) if (!strcmp(argv[i], \"-p\"))\n"
    "    p = atoi(argv[i + 1]);\n"
    "  double t0 = cpu_ms(), want = 0.5 + p * PER_TOKEN_US / 1000.0;\n"
    "  volatile double x = 0;\n"
    "  while (cpu_ms() - t0 < want) x += 1;\n"
    "  printf(\"prefill_ms=%.4f\\n\", cpu_ms() - t0);\n"
    "  return 0; }\n";

static void
write_engine(const char *name, int per_token_us, const char *tail)
{
	char text[4096];

	snprintf(text, sizeof(text), "%s#define PER_TOKEN_US %d\n%s%s",
	    engine_head, per_token_us, engine_body, tail);
	check_write_file(name, text);
}

int
gitengine_make_repo(void)
{
	write_engine("good.c", 8, "");
	write_engine("broken.c", 8, "int broken(void) {\n");
	write_engine("slow.c", 24, "");
	return check_run(
	    "export GIT_CONFIG_NOSYSTEM=1 HOME=$PWD && "
	    "git init -q repo && cd repo && "
	    "git config user.name 'Ada Lovelace' && "
	    "git config user.email ada@example.org && "
	    "for i in $(seq 0 23); do "
	    "  export GIT_AUTHOR_DATE=\"@$((1767225600 + i * 3600)) +0000\"; "
	    "  export GIT_COMMITTER_DATE=\"$GIT_AUTHOR_DATE\"; "
	    "  case $i in "
	    "  0) cp ../good.c engine.c; echo 0 > NEWS; git add .; "
	    "     git commit -q -m 'the engine'; git tag v1.0;; "
	    "  15) cp ../broken.c engine.c; "
	    "     git commit -q -am 'refactor the token loop';; "
	    "  16) cp ../slow.c engine.c; "
	    "     git commit -q -am 'slow: per-token work tripled';; "
	    "  *) echo $i >> NEWS; git commit -q -am \"note $i\";; "
	    "  esac; "
	    "  case $i in 8) git tag v1.1;; 14) git tag v1.2;; "
	    "  20) git tag v1.3;; esac; "
	    "done && git tag -a v2.0 -m 'release 2.0' && "
	    "git rev-parse HEAD~8 > ../broken.id && "
	    "git rev-parse HEAD~7 > ../slow.id && "
	    "git rev-parse HEAD~9 > ../good.id", NULL);
}

int
gitengine_make_releases(void)
{
	return check_run(
	    "mkdir -p rel stage && for t in v1.0 v1.1 v1.2 v1.3 v2.0; do "
	    "  git -C repo show $t:engine.c > stage/src.c && "
	    "  cc -O0 -o stage/engine stage/src.c && "
	    "  tar czf rel/eng-${t#v}.tar.gz -C stage engine || exit 1; "
	    "done", NULL);
}

