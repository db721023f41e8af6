// SPDX-License-Identifier: GPL-2.0
/*
 * The option parser fed argv vectors: the input split on NUL bytes, after
 * the program name. A usage error must say why in one line; a success
 * must leave a configuration the session can trust.
 */
#include "fuzz.h"
#include "opts.h"

#define MAX_ARGS 64

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* --help and --version print; the fuzzer does not need to see it. */
	if (!freopen("/dev/null", "w", stdout))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2];
	int argc = 0, ret;
	struct config cfg;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[argc++] = (char *)"iostackbreak";
	for (char *p = copy; p <= copy + size && argc <= MAX_ARGS; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	ret = parse_options(argc, argv, &cfg);
	if (ret) {
		FUZZ_CHECK(ret == 2, "returned %d", ret);
		FUZZ_CHECK(cfg.errmsg[0] && !strchr(cfg.errmsg, '\n'), "message '%s'", cfg.errmsg);
	} else if (!cfg.help_shown) {
		FUZZ_CHECK(cfg.layers, "no layer");
		FUZZ_CHECK(cfg.nr_pids <= 16, "%u pids", cfg.nr_pids);
		FUZZ_CHECK(!(cfg.command && cfg.nr_pids), "a command with -p");
		FUZZ_CHECK(!cfg.count || cfg.interval, "count %u without interval", cfg.count);
		FUZZ_CHECK(!cfg.prometheus || cfg.prom_port, "port 0");
	}
	free(copy);
	return 0;
}
