/* Fuzz target: the exact JSON parser (traces/json.h) on any bytes, then the
 * exact integer conversion of every number in the document. */
#include "fuzz.h"
#include "traces/json.h"

static void walk(const json_value *v, int depth)
{
    uint64_t u;
    int64_t i;
    switch (v->type) {
    case JSON_NUMBER:
        (void)json_to_u64(v, UINT64_MAX, &u);
        (void)json_to_i64(v, UINT64_MAX, &i);
        (void)json_to_double(v);
        break;
    case JSON_ARRAY:
        for (uint32_t k = 0; k < v->len; k++)
            walk(&v->u.items[k], depth + 1);
        break;
    case JSON_OBJECT:
        for (uint32_t k = 0; k < v->len; k++) {
            walk(&v->u.members[k].value, depth + 1);
            (void)json_get(v, v->u.members[k].key);
        }
        break;
    case JSON_NULL:
    case JSON_TRUE:
    case JSON_FALSE:
    case JSON_STRING:
    default: break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_parser *p = json_parser_new();
    if (p == NULL)
        return 0;
    char err[256];
    const json_value *v = json_parse(p, (const char *)data, size, 1, err, sizeof err);
    if (v)
        walk(v, 0);
    json_parser_free(p);
    return 0;
}
