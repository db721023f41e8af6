// SPDX-License-Identifier: GPL-2.0
/* The man page must document every option --help lists, and the reverse. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "opts.h"
#include "version.h"

static char *slurp(FILE *f)
{
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	do {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			cr_assert_not_null(buf);
		}
		n = fread(buf + len, 1, cap - len - 1, f);
		len += n;
	} while (n);
	buf[len] = '\0';
	return buf;
}

/* Calls fn(name) for every match of group 1 of pattern in text. */
static void each_match(const char *text, const char *pattern, void (*fn)(const char *, void *),
		       void *arg)
{
	regmatch_t m[2];
	regex_t re;
	const char *p = text;

	cr_assert_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NEWLINE), 0);
	while (!regexec(&re, p, 2, m, 0)) {
		char name[64];
		int len = (int)(m[1].rm_eo - m[1].rm_so);

		snprintf(name, sizeof(name), "%.*s", len, p + m[1].rm_so);
		fn(name, arg);
		p += m[0].rm_eo;
	}
	regfree(&re);
}

static void in_man(const char *name, void *man)
{
	char want[80];

	snprintf(want, sizeof(want), "\\fB%s\\fR", name);
	cr_expect_not_null(strstr(man, want), "man page lacks %s (looked for %s)", name, want);
}

static void in_help(const char *name, void *help)
{
	char want[80];

	snprintf(want, sizeof(want), "--%s", name);
	cr_expect_not_null(strstr(help, want), "--help lacks --%s, which the man page has", name);
}

Test(manpage, matches_help, .init = cr_redirect_stdout)
{
	char *argv[] = { "iostackbreak", "--help", NULL };
	struct config cfg;
	char *help, *man;
	FILE *f;

	cr_assert_eq(parse_options(2, argv, &cfg), 0);
	fflush(stdout);
	help = slurp(cr_get_redirected_stdout());
	f = fopen("man/iostackbreak.8", "r");
	cr_assert_not_null(f, "run the unit tests from the repository root");
	man = slurp(f);
	fclose(f);
	/* groff writes "--per-disk" as "\\-\\-per\\-disk": undo the escapes. */
	for (char *r = man, *w = man;; r++) {
		if (r[0] == '\\' && r[1] == '-')
			r++;
		*w++ = *r;
		if (!*r)
			break;
	}
	/* Every option of --help, long and short, is in the man page... */
	each_match(help, "^ +(-[a-zA-Z]),", in_man, man);
	each_match(help, "^ +-[a-zA-Z], (--[a-z-]+)", in_man, man);
	each_match(help, "^      (--[a-z-]+)", in_man, man);
	/* ...and every option the man page describes is in --help. */
	each_match(man, "^\\.TP\n.*\\\\fB--([a-z-]+)\\\\fR", in_help, help);
	free(help);
	free(man);
}

/*
 * The title line carries the version --version prints (iosb_version, which
 * test_version checks against debian/changelog, its one source), so that a
 * new changelog entry fails here until the page says it too.
 */
Test(manpage, title_has_the_version)
{
	char line[256], want[96];
	FILE *f = fopen("man/iostackbreak.8", "r");

	cr_assert_not_null(f, "run the unit tests from the repository root");
	cr_assert_not_null(fgets(line, sizeof(line), f));
	fclose(f);
	cr_assert_eq(strncmp(line, ".TH iostackbreak 8 ", 19), 0, "first line: %s", line);
	snprintf(want, sizeof(want), "\"iostackbreak %s\"", iosb_version);
	cr_assert_not_null(strstr(line, want), "the man page's title line lacks %s: %s", want,
			   line);
}
