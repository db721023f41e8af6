/* SPDX-License-Identifier: GPL-2.0 */
/* Messages that quote what the user gave us stay one printable line. */
#ifndef QUOTE_H
#define QUOTE_H

#include <stddef.h>

/*
 * Rewrites buf (a NUL-terminated message of room sz) so that control
 * characters (a newline in a path, an escape sequence in a name) show as
 * \n, \t or \xNN instead of breaking the line or driving the terminal.
 * What no longer fits is cut, ending in "...".
 */
void printable_line(char *buf, size_t sz);

#endif /* QUOTE_H */
