// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>
#include "quote.h"

void printable_line(char *buf, size_t sz)
{
	char out[1024];
	size_t used = 0;

	if (!sz)
		return;
	for (const unsigned char *p = (const unsigned char *)buf; *p; p++) {
		char esc[5];
		size_t n;

		if (*p == '\n')
			snprintf(esc, sizeof(esc), "\\n");
		else if (*p == '\t')
			snprintf(esc, sizeof(esc), "\\t");
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(esc, sizeof(esc), "\\x%02x", *p);
		else
			esc[0] = (char)*p, esc[1] = '\0';
		n = strlen(esc);
		if (used + n + 4 > sizeof(out) || used + n + 4 > sz) {
			memcpy(out + used, "...", 4);
			used += 3;
			break;
		}
		memcpy(out + used, esc, n);
		used += n;
	}
	out[used] = '\0';
	memcpy(buf, out, used + 1);
}
