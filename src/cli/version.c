// SPDX-License-Identifier: GPL-2.0
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>
#include "version.h"

/* The Makefile passes both; a build without them is a build we cannot name. */
#ifndef IOSB_VERSION
#error "IOSB_VERSION comes from the Makefile (the top entry of debian/changelog)"
#endif
#ifndef IOSB_COMMIT
#error "IOSB_COMMIT comes from the Makefile (git rev-parse, or release)"
#endif

const char iosb_version[] = IOSB_VERSION;
const char iosb_commit[] = IOSB_COMMIT;

void print_version(FILE *out)
{
	fprintf(out, "iostackbreak %s\n", iosb_version);
	fprintf(out, "commit %s\n", iosb_commit);
	/*
	 * The libbpf loaded at run time decides what we can do (a packaged
	 * binary meets whatever the system has); the headers' version is the
	 * one we were built against, shown when they differ.
	 */
	fprintf(out, "libbpf %u.%u", libbpf_major_version(), libbpf_minor_version());
	if (libbpf_major_version() != LIBBPF_MAJOR_VERSION ||
	    libbpf_minor_version() != LIBBPF_MINOR_VERSION)
		fprintf(out, " (built with %d.%d)", LIBBPF_MAJOR_VERSION, LIBBPF_MINOR_VERSION);
	fputc('\n', out);
}
