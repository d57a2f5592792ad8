/* log.h: diagnostics for the log file ($HQT_LOG, or stderr with HQT_DEBUG=1). */
#ifndef HQT_LOG_H
#define HQT_LOG_H

#include "util.h"

void hqt_log(const char *fmt, ...) HQT_PRINTF(1, 2);

#endif
