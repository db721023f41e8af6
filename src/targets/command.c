// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "command.h"

static bool is_executable_file(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && !access(path, X_OK);
}

int command_findable(const char *name, char *err, size_t errsz)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!*name) {
		snprintf(err, errsz, "cannot run '': give a command after --");
		return -1;
	}
	if (strchr(name, '/')) {
		if (is_executable_file(name))
			return 0;
		snprintf(err, errsz, "cannot run %s: %s", name,
			 access(name, F_OK) ? strerror(errno) : "not an executable file");
		return -1;
	}
	/* execvp's default search path when PATH is unset. */
	for (const char *dir = path ? path : "/bin:/usr/bin"; dir;) {
		const char *end = strchr(dir, ':');
		int len = end ? (int)(end - dir) : (int)strlen(dir);

		/* An empty entry is the current directory. */
		if (snprintf(buf, sizeof(buf), "%.*s/%s", len ? len : 1, len ? dir : ".", name) <
			(int)sizeof(buf) &&
		    is_executable_file(buf))
			return 0;
		dir = end ? end + 1 : NULL;
	}
	snprintf(err, errsz, "cannot run %s: no such command in PATH", name);
	return -1;
}

int command_spawn(struct command *c, char **argv, const sigset_t *child_mask)
{
	int fds[2];

	*c = (struct command){ .release_fd = -1 };
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	c->pid = fork();
	if (c->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		c->pid = 0;
		return -1;
	}
	if (c->pid == 0) {
		char go;

		close(fds[1]);
		/* Released (or the tracer died): EOF either way; go only on a byte. */
		if (read(fds[0], &go, 1) != 1)
			_exit(126);
		sigprocmask(SIG_SETMASK, child_mask, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGPIPE, SIG_DFL); /* ignored by the tracer, not by the command */
		execvp(argv[0], argv);
		fprintf(stderr, "iostackbreak: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[0]);
	c->release_fd = fds[1];
	return 0;
}

int command_release(struct command *c)
{
	int ret = write(c->release_fd, "g", 1) == 1 ? 0 : -1;

	close(c->release_fd);
	c->release_fd = -1;
	return ret;
}

bool command_reap(struct command *c)
{
	if (c->pid > 0 && !c->exited && waitpid(c->pid, &c->wait_status, WNOHANG) == c->pid)
		c->exited = true;
	return c->exited;
}

int command_exit_code(const struct command *c)
{
	if (WIFEXITED(c->wait_status))
		return WEXITSTATUS(c->wait_status);
	if (WIFSIGNALED(c->wait_status))
		return 128 + WTERMSIG(c->wait_status);
	return 0;
}

void command_cleanup(struct command *c)
{
	if (c->release_fd >= 0) {
		/* Never released: the child reads EOF and exits without running. */
		close(c->release_fd);
		c->release_fd = -1;
		waitpid(c->pid, &c->wait_status, 0);
		c->exited = true;
	}
}
