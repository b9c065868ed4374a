/* Fuzz target: the two readings of the pickle reader (traces/import_pickle.h) on any
 * bytes, each leaving the snapshot importer's unread keys out: the lean one must give
 * exactly the exact one's status, message and DOM, whether it read the pickle
 * through or started again. */
#include <stdio.h>

#include "fuzz.h"
#include "traces/import_pickle.h"

static const char *const UNREAD[] = {"frames", "compile_context", "user_metadata", NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > ((size_t)1 << 20))
        return 0;
    const pickle_options lean = {.unread_keys = UNREAD}, exact = {.unread_keys = UNREAD, .exact = true};
    pickle_doc *ld = NULL, *xd = NULL;
    const json_value *lr = NULL, *xr = NULL;
    sim_error le, xe;
    memset(&le, 0, sizeof le);
    memset(&xe, 0, sizeof xe);
    sim_status ls = pickle_parse("f.pickle", data, size, &lean, &ld, &lr, &le);
    sim_status xs = pickle_parse("f.pickle", data, size, &exact, &xd, &xr, &xe);
    bool same = ls == xs && (ls == SIM_ENOMEM || (ls == SIM_OK ? json_equal(lr, xr) && !pickle_doc_restarted(xd)
                                                               : strcmp(le.msg, xe.msg) == 0));
    if (!same) {
        fprintf(stderr, "fuzz_pickle: the readings differ: lean %d '%s', exact %d '%s'\n", ls, le.msg, xs, xe.msg);
        abort();
    }
    pickle_free(ld);
    pickle_free(xd);
    return 0;
}
