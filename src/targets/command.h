/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `-- COMMAND`: the command runs in a child that waits at a pipe until the
 * tracer is attached, so that none of its I/O is missed, then execs.
 */
#ifndef COMMAND_H
#define COMMAND_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct command {
	pid_t pid;	 /* 0: none started */
	int release_fd;	 /* the write end of the held child's pipe; -1 once used */
	bool exited;	 /* reaped */
	int wait_status; /* as waitpid() gave it */
};

/*
 * Whether execvp() would find NAME: a path to an executable file, or one in
 * $PATH. Checked before anything is loaded, so that a typo costs one line
 * (exit 127, as a shell's) rather than a start-up. Returns 0, or -1 with a
 * message in err.
 */
int command_findable(const char *name, char *err, size_t errsz);

/*
 * Forks the child, held before exec. child_mask: the signal mask the command
 * must run with (ours has the stop signals blocked for the signalfd).
 * Returns 0, or -1 with errno.
 */
int command_spawn(struct command *c, char **argv, const sigset_t *child_mask);

/* Lets the held child exec. Returns 0 or -1 with errno. */
int command_release(struct command *c);

/* Reaps the child if it has exited (after SIGCHLD). True once it has. */
bool command_reap(struct command *c);

/* The exit status to pass on: the command's, or 128 + its signal. */
int command_exit_code(const struct command *c);

/* Ends the session's hold on the child: an unreleased one exits without
 * running; a started one is waited for only if it has already ended. */
void command_cleanup(struct command *c);

#endif /* COMMAND_H */
