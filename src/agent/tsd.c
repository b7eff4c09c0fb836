/* tsd.c - the agent's thread-local state and tracing switch (tsd.h). */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/tsd.h"

__thread tl_tsd_t tl_tsd __attribute__((tls_model("initial-exec")));
atomic_int tl_agent_state;
