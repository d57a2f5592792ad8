/* consent.c: the one consent to skipped permission prompts in sandboxes.
 *
 * A sandboxed session runs its harness with the prompts skipped
 * (--dangerously-skip-permissions and the like).  Claude Code asks for that
 * itself at every start it cannot save, which stops every sandboxed claude
 * after a reboot; hqt asks once instead, remembers the answer here, and
 * passes the acceptance to the harness per launch. */
#include "consent.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char consent_text[] =
	"Sandboxed sessions run the agent with its permission prompts skipped: it runs\n"
	"commands and edits files without asking you first.  The sandbox is what holds\n"
	"it: it may write only the project (or its worktree), its own private state and\n"
	"/tmp, reads none of your other projects or secrets, and nothing it writes is run\n"
	"later outside (docs/sandbox.md says exactly what holds, and its limits: review\n"
	"what it changed in the project before you run it).\n";

static char *
consent_path(void)
{
	char *data = xdg_data_home(), *p;

	if (data == NULL)
		return NULL;
	p = xasprintf("%s/hqt/consent", data);
	free(data);
	return p;
}

bool
consent_given(void)
{
	char *p = consent_path();
	bool ok = p != NULL && access(p, F_OK) == 0;

	free(p);
	return ok;
}

int
consent_record(bool revoke, char **err)
{
	char *p = consent_path(), *dir;
	int fd, rc = -1;

	if (p == NULL) {
		set_err(err, "no data directory to remember the consent in ($HOME unset)");
		return -1;
	}
	if (revoke) {
		rc = unlink(p) == 0 || errno == ENOENT ? 0 : -1;
		if (rc != 0)
			set_err(err, "cannot remove '%s': %s", p, strerror(errno));
		free(p);
		return rc;
	}
	dir = xstrndup(p, (size_t)(strrchr(p, '/') - p));
	if (mkdir_p(dir, 0700) < 0) {
		set_err(err, "cannot create '%s': %s", dir, strerror(errno));
		goto out;
	}
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		set_err(err, "cannot write '%s': %s", p, strerror(errno));
		goto out;
	}
	dprintf(fd, "skip-permissions-in-sandbox accepted %lld\n", (long long)time(NULL));
	close(fd);
	rc = 0;
out:
	free(dir);
	free(p);
	return rc;
}
