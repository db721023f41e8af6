/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this binary is: its version (from debian/changelog, the one place it
 * is written), the git commit it was built from, the libbpf it runs with.
 */
#ifndef VERSION_H
#define VERSION_H

#include <stdio.h>

/* e.g. "0.3.0" */
extern const char iosb_version[];
/* The commit's hash, with "-dirty" for uncommitted changes; "release" outside git. */
extern const char iosb_commit[];

/* The --version text: three lines. */
void print_version(FILE *out);

#endif /* VERSION_H */
