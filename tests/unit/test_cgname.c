// SPDX-License-Identifier: GPL-2.0
/* -G: container ids and pod uids from the cgroup paths runtimes make. */
#include "unit.h"
#include "cgname.h"

#define ID64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID "1f2e3d4c-5b6a-4978-8695-a4b3c2d1e0f9"
#define UID_ "1f2e3d4c_5b6a_4978_8695_a4b3c2d1e0f9"

Test(cgname, runtime_ids)
{
	static const struct {
		const char *path, *container, *pod;
	} rows[] = {
		{ "/", "", "" },
		{ "/system.slice/cron.service", "", "" },
		{ "/user.slice/user-1000.slice/session-3.scope", "", "" },
		/* Docker with the systemd driver, and with cgroupfs. */
		{ "/system.slice/docker-" ID64 ".scope", ID64, "" },
		{ "/docker/" ID64, ID64, "" },
		/* Podman. */
		{ "/machine.slice/libpod-" ID64 ".scope", ID64, "" },
		/* Kubernetes, systemd driver: containerd and CRI-O. */
		{ "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
		  ".slice/cri-containerd-" ID64 ".scope",
		  ID64, UID },
		{ "/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID64 ".scope", ID64, UID },
		/* The pod's own cgroup, no container. */
		{ "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
		  "", UID },
		/* Kubernetes, cgroupfs driver. */
		{ "/kubepods/burstable/pod" UID "/" ID64, ID64, UID },
		/* Near misses: no id is made up. */
		{ "/system.slice/docker.service", "", "" },
		{ "/system.slice/docker-xyz.scope", "", "" },
		{ "/kubepods.slice/kubepods-podnot-a-uid.slice", "", "" },
		{ "/docker/"
		  "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef",
		  "", "" },
		{ "/podcast/"
		  "0123",
		  "", "" },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(rows); i++) {
		char container[80], pod[40];

		cgroup_runtime_ids(rows[i].path, container, sizeof(container), pod, sizeof(pod));
		cr_expect_str_eq(container, rows[i].container, "container of %s", rows[i].path);
		cr_expect_str_eq(pod, rows[i].pod, "pod of %s", rows[i].path);
	}
}

/* Small buffers truncate, never overflow. */
Test(cgname, small_buffers)
{
	char container[13], pod[9];

	cgroup_runtime_ids("/kubepods/burstable/pod" UID "/" ID64, container, sizeof(container),
			   pod, sizeof(pod));
	cr_expect_str_eq(container, "0123456789ab");
	cr_expect_str_eq(pod, "1f2e3d4c");
}
