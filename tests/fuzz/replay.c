/* replay.c: runs every file of the given corpus directories (or files) through
 * LLVMFuzzerTestOneInput once, so fuzz findings stay fixed under plain ctest. */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Corpus files may be larger than any config file, to test the limits. */
#define REPLAY_MAX (16u << 20)

static int
replay_file(const char *path)
{
	size_t len = 0;
	char *data = read_file(path, REPLAY_MAX, &len);

	if (data == NULL) {
		fprintf(stderr, "replay: cannot read '%s': %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput((const uint8_t *)data, len);
	free(data);
	return 0;
}

static int
cmp_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int
only_files(const struct dirent *de)
{
	return de->d_name[0] != '.';
}

int
main(int argc, char **argv)
{
	int nrun = 0, failed = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s CORPUS-DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		struct stat st;
		struct dirent **ents;
		int n;

		if (stat(argv[a], &st) != 0) {
			fprintf(stderr, "replay: '%s': %s\n", argv[a], strerror(errno));
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			failed |= replay_file(argv[a]) != 0;
			nrun++;
			continue;
		}
		n = scandir(argv[a], &ents, only_files, cmp_name);
		if (n < 0) {
			fprintf(stderr, "replay: '%s': %s\n", argv[a], strerror(errno));
			return 1;
		}
		for (int i = 0; i < n; i++) {
			char *path = xasprintf("%s/%s", argv[a], ents[i]->d_name);
			failed |= replay_file(path) != 0;
			nrun++;
			free(path);
			free(ents[i]);
		}
		free(ents);
	}
	if (nrun == 0) {
		fprintf(stderr, "replay: no inputs (an empty corpus proves nothing)\n");
		return 1;
	}
	fprintf(stderr, "replay: %d inputs, %s\n", nrun, failed ? "some unreadable" : "all ran");
	return failed ? 1 : 0;
}
