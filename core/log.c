/* log.c: diagnostics that are not errors: to $HQT_LOG when set, to stderr when
 * HQT_DEBUG is set, else dropped. */
#include "log.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
hqt_log(const char *fmt, ...)
{
	const char *path = getenv("HQT_LOG");
	va_list ap;
	char *msg, *line;
	int fd = -1;
	time_t now = time(NULL);
	struct tm tm;
	char ts[32];

	if (path != NULL && *path != '\0')
		fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	else if (getenv("HQT_DEBUG") != NULL)
		fd = dup(STDERR_FILENO);
	if (fd < 0)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	localtime_r(&now, &tm);
	strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
	line = xasprintf("%s hqt[%d]: %s\n", ts, (int)getpid(), msg);
	(void)!write(fd, line, strlen(line));
	free(line);
	free(msg);
	close(fd);
}
