// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cgname.h"

/* The handle type of kernfs nodes (include/linux/exportfs.h): the 8 bytes
 * of a handle are the cgroup id. */
#define FILEID_KERNFS 0xfe

struct cg_known {
	uint64_t id;
	char *path;	   /* NULL: looked for and not found */
	double gone_since; /* cgroup_gone_for(): when first found gone; 0: not */
};

static struct {
	pthread_mutex_t lock; /* the exporter's thread reports too */
	bool mount_looked;
	char mount[PATH_MAX]; /* where cgroup2 is mounted; "" if nowhere */
	int mount_fd;
	struct cg_known *v;
	size_t n, cap;
} cg = { .lock = PTHREAD_MUTEX_INITIALIZER, .mount_fd = -1 };

/* The first cgroup2 mount of /proc/self/mountinfo. */
static void find_mount(void)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	char line[4096];

	cg.mount_looked = true;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *dash = strstr(line, " - ");

		/* id parent major:minor root mountpoint ... - fstype ... */
		if (!dash || strncmp(dash, " - cgroup2 ", 11) ||
		    sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		if (strchr(mnt, '\\')) /* an escaped name: not one we can open */
			continue;
		cg.mount_fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg.mount_fd >= 0) {
			snprintf(cg.mount, sizeof(cg.mount), "%s", mnt);
			break;
		}
	}
	fclose(f);
}

/* The cgroup's directory, opened by its id (the kernel's file handle of
 * it), or -1 when it is gone. */
static int open_cgroup_id(uint64_t id)
{
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + sizeof(uint64_t)];
	} h;

	h.fh.handle_bytes = sizeof(id);
	h.fh.handle_type = FILEID_KERNFS;
	memcpy(h.fh.f_handle, &id, sizeof(id));
	return open_by_handle_at(cg.mount_fd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* Opens the cgroup by its id and reads back its path. */
static char *lookup(uint64_t id)
{
	char link[64], path[PATH_MAX];
	size_t mlen = strlen(cg.mount);
	ssize_t len;
	int fd = open_cgroup_id(id);

	if (fd < 0)
		return NULL;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	len = readlink(link, path, sizeof(path) - 1);
	close(fd);
	if (len < 0)
		return NULL;
	path[len] = '\0';
	if (strncmp(path, cg.mount, mlen) || (path[mlen] && path[mlen] != '/'))
		return NULL; /* outside our view of the hierarchy */
	return strdup(path[mlen] ? path + mlen : "/");
}

/* What is known of id, looked up the first time; NULL without memory or
 * cgroup v2. Called with the lock held. */
static struct cg_known *known(uint64_t id)
{
	size_t i;

	if (!cg.mount_looked)
		find_mount();
	for (i = 0; i < cg.n; i++)
		if (cg.v[i].id == id)
			return &cg.v[i];
	if (cg.mount_fd < 0)
		return NULL;
	if (cg.n == cg.cap) {
		size_t cap = cg.cap ? cg.cap * 2 : 64;
		struct cg_known *v = realloc(cg.v, cap * sizeof(*v));

		if (!v)
			return NULL;
		cg.v = v;
		cg.cap = cap;
	}
	/* A gone cgroup is not asked again: its id is never reused. */
	cg.v[cg.n] = (struct cg_known){ .id = id, .path = lookup(id) };
	return &cg.v[cg.n++];
}

const char *cgroup_name(uint64_t id)
{
	const struct cg_known *k;
	const char *name;

	pthread_mutex_lock(&cg.lock);
	k = known(id);
	name = k ? k->path : NULL;
	pthread_mutex_unlock(&cg.lock);
	return name;
}

const char *cgroup_name_fallback(uint64_t id, const char *path)
{
	struct cg_known *k;
	const char *name;

	pthread_mutex_lock(&cg.lock);
	k = known(id);
	if (k && !k->path)
		k->path = strdup(path);
	name = k ? k->path : NULL;
	pthread_mutex_unlock(&cg.lock);
	return name;
}

double cgroup_gone_for(uint64_t id, double now)
{
	struct cg_known *k;
	double gone = -1;
	int fd;

	pthread_mutex_lock(&cg.lock);
	k = known(id);
	if (k) {
		fd = open_cgroup_id(id);
		if (fd >= 0) {
			close(fd);
			k->gone_since = 0;
		} else if (errno == ESTALE || errno == ENOENT) {
			if (!k->gone_since)
				k->gone_since = now;
			gone = now - k->gone_since;
		}
	}
	pthread_mutex_unlock(&cg.lock);
	return gone;
}

void cgroup_forget(uint64_t id)
{
	pthread_mutex_lock(&cg.lock);
	for (size_t i = 0; i < cg.n; i++) {
		if (cg.v[i].id != id)
			continue;
		free(cg.v[i].path);
		cg.v[i] = cg.v[--cg.n];
		break;
	}
	pthread_mutex_unlock(&cg.lock);
}

/* At least min lowercase hex digits, and nothing else, in s[0..len). */
static bool all_hex(const char *s, size_t len, size_t min)
{
	if (len < min)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A pod uid: 32 hex digits in the 8-4-4-4-12 form, '-' or '_' between. */
static bool copy_uid(const char *s, size_t len, char *pod, size_t psz)
{
	if (len != 36)
		return false;
	for (size_t i = 0; i < len; i++) {
		bool sep = i == 8 || i == 13 || i == 18 || i == 23;

		if (sep ? (s[i] != '-' && s[i] != '_') : !all_hex(s + i, 1, 1))
			return false;
	}
	snprintf(pod, psz, "%.36s", s);
	for (char *p = pod; *p; p++)
		if (*p == '_')
			*p = '-';
	return true;
}

/* One component of the path, c[0..len). */
static void component_ids(const char *c, size_t len, char *container, size_t csz, char *pod,
			  size_t psz)
{
	static const char *const scopes[] = { "docker-", "cri-containerd-", "crio-", "libpod-" };
	const char *p;

	/* kubepods-burstable-pod<uid>.slice, kubepods-pod<uid>.slice */
	if (len > 6 && !strncmp(c, "kubepods", 8) && !memcmp(c + len - 6, ".slice", 6)) {
		for (p = c; p + 4 <= c + len; p++)
			if (!strncmp(p, "-pod", 4) &&
			    copy_uid(p + 4, (size_t)(c + len - 6 - p - 4), pod, psz))
				return;
	}
	/* cgroupfs: pod<uid> under kubepods */
	if (len > 3 && !strncmp(c, "pod", 3) && copy_uid(c + 3, len - 3, pod, psz))
		return;
	/* <runtime>-<id>.scope */
	if (len > 6 && !memcmp(c + len - 6, ".scope", 6)) {
		for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
			size_t plen = strlen(scopes[i]);

			if (len > plen + 6 && !strncmp(c, scopes[i], plen) &&
			    all_hex(c + plen, len - plen - 6, 12)) {
				snprintf(container, csz, "%.*s", (int)(len - plen - 6), c + plen);
				return;
			}
		}
	}
	/* cgroupfs: /docker/<id>, /kubepods/<class>/pod<uid>/<id> */
	if (len == 64 && all_hex(c, len, 64))
		snprintf(container, csz, "%.64s", c);
}

void cgroup_runtime_ids(const char *path, char *container, size_t csz, char *pod, size_t psz)
{
	container[0] = '\0';
	pod[0] = '\0';
	/* Left to right: the innermost match of each kind wins. */
	for (const char *c = path; *c;) {
		size_t len = strcspn(c, "/");

		if (len)
			component_ids(c, len, container, csz, pod, psz);
		c += len;
		if (*c)
			c++;
	}
}
