// SPDX-License-Identifier: GPL-2.0
/* --version: the changelog's version, a commit, and the libbpf we run with. */
#include <bpf/libbpf.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "unit.h"
#include <criterion/redirect.h>
#include "version.h"

/* The version as debian/changelog's top entry writes it: the one source. */
static void changelog_version(char *buf, size_t size)
{
	FILE *f = fopen("debian/changelog", "r");
	char line[256], *open, *close;

	cr_assert_not_null(f, "run the unit tests from the repository root");
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	open = strchr(line, '(');
	close = open ? strchr(open, ')') : NULL;
	cr_assert(open && close, "first changelog line without (version): %s", line);
	snprintf(buf, size, "%.*s", (int)(close - open - 1), open + 1);
}

Test(version, three_lines, .init = cr_redirect_stdout)
{
	char *argv[] = { "iostackbreak", "--version", NULL };
	char want[512], got[512], version[64], libbpf[64];
	struct config cfg;
	size_t n;

	cr_assert_eq(parse_options(2, argv, &cfg), 0);
	cr_assert(cfg.help_shown, "--version must end the run with status 0");
	fflush(stdout);
	n = fread(got, 1, sizeof(got) - 1, cr_get_redirected_stdout());
	got[n] = '\0';

	changelog_version(version, sizeof(version));
	/* libbpf_version_string() is "v1.1": another way to the same numbers. */
	snprintf(libbpf, sizeof(libbpf), "%s", libbpf_version_string() + 1);
	snprintf(want, sizeof(want), "iostackbreak %s\ncommit %s\nlibbpf %s\n", version, iosb_commit,
		 libbpf);
	cr_assert_str_eq(got, want);
}

/* A 12-digit hash (-dirty when the tree had changes), or "release". */
Test(version, commit_form)
{
	regex_t re;

	cr_assert_eq(regcomp(&re, "^([0-9a-f]{12}(-dirty)?|release)$", REG_EXTENDED | REG_NOSUB), 0);
	cr_assert_eq(regexec(&re, iosb_commit, 0, NULL, 0), 0, "commit '%s'", iosb_commit);
	regfree(&re);
}
