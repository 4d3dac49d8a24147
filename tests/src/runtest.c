// SPDX-License-Identifier: GPL-2.0
/*
 * runtest SECONDS CMD [ARG...]: run one in-guest test under a time limit,
 * kselftest's per-test timeout: CMD runs in a process group of its own; when
 * it is still running after SECONDS, the whole group gets SIGTERM, then
 * SIGKILL 5 s later, and runtest exits 124 after saying so. Otherwise it exits
 * with CMD's status (128 + signal if a signal ended it), after killing what
 * CMD left running in its process group. A test stuck in the
 * kernel past SIGKILL is left behind after another 10 s, so that the next test
 * still runs; its splats, if any, reach the log.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int status_of(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for pid until the deadline; 1 and *st set if it ended, 0 if not. */
static int wait_until(pid_t pid, double deadline, int *st)
{
	for (;;) {
		pid_t r = waitpid(pid, st, WNOHANG);

		if (r == pid)
			return 1;
		if (r < 0 && errno != EINTR) {
			*st = 1 << 8;
			return 1;
		}
		if (now() >= deadline)
			return 0;
		usleep(100 * 1000);
	}
}

int main(int argc, char **argv)
{
	double limit, start;
	char *end;
	pid_t pid;
	int st;

	if (argc < 3) {
		fprintf(stderr, "usage: runtest SECONDS CMD [ARG...]\n");
		return 2;
	}
	limit = strtod(argv[1], &end);
	if (*end || limit <= 0) {
		fprintf(stderr, "runtest: bad time limit '%s'\n", argv[1]);
		return 2;
	}
	start = now();
	pid = fork();
	if (pid < 0) {
		perror("runtest: fork");
		return 2;
	}
	if (pid == 0) {
		setpgid(0, 0);
		execvp(argv[2], argv + 2);
		fprintf(stderr, "runtest: %s: %s\n", argv[2], strerror(errno));
		_exit(127);
	}
	/* Either side may win the race to make the group. */
	setpgid(pid, pid);
	if (wait_until(pid, start + limit, &st)) {
		/* What the test left running in its group goes with it. */
		kill(-pid, SIGKILL);
		return status_of(st);
	}
	printf("runtest: time limit: %s still running after %.0f s, killed\n",
	       argv[2], limit);
	fflush(stdout);
	kill(-pid, SIGTERM);
	if (!wait_until(pid, now() + 5, &st)) {
		kill(-pid, SIGKILL);
		if (!wait_until(pid, now() + 10, &st))
			printf("runtest: %s did not die; going on without it\n",
			       argv[2]);
	}
	/* Whatever the group left running dies too. */
	kill(-pid, SIGKILL);
	return 124;
}
