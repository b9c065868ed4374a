/* The library entry point: a command run through a cli_io instead of the shell. */
#include "api.h"

#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sim/buf.h"

struct gpusim_api_call {
    int exit_code;
    sim_status status;
    sim_buf out, notes;
    char msg[1600];
};

gpusim_api_call *gpusim_api_run(const char *command, int argc, char **argv, const char *mem_name, const void *mem,
                                size_t mem_len)
{
    gpusim_api_call *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    sim_buf_init(&c->out);
    sim_buf_init(&c->notes);
    cli_io io_store = {
        .mem_name = mem_name, .mem = mem, .mem_len = mem_len, .out = &c->out, .notes = &c->notes};
    cli_io *io = &io_store;
    sim_error_clear(&io->err);
    const commands_entry *cmd = commands_find(command);
    if (cmd == NULL || cmd->io == NULL) {
        char names[256];
        c->exit_code = 2;
        c->status = sim_error_set(&io->err, SIM_EUSAGE, NULL, 0, 0, "unknown command '%s' (expected %s)",
                                  command ? command : "", commands_io_names(names, sizeof names));
    } else {
        c->exit_code = cmd->io(io, argc, argv);
        c->status = io->err.status;
    }
    if (c->status == SIM_EUSAGE)
        snprintf(c->msg, sizeof c->msg, "%s", io->err.msg);
    else if (c->status != SIM_OK && c->status != SIM_END)
        sim_error_format(&io->err, c->msg, sizeof c->msg);
    return c;
}

int gpusim_api_exit_code(const gpusim_api_call *c)
{
    return c->exit_code;
}

const char *gpusim_api_error_kind(const gpusim_api_call *c)
{
    switch (c->status) {
    case SIM_OK:
    case SIM_END:
    case SIM_OOM:
        return "";
    case SIM_EUSAGE:
        return "usage";
    case SIM_EIO:
        return "io";
    case SIM_ETRACE:
        return "trace";
    case SIM_ENOMEM:
        return "memory";
    case SIM_EINTERNAL:
        return "internal";
    }
    return "internal";
}

const char *gpusim_api_error(const gpusim_api_call *c)
{
    return c->msg;
}

const char *gpusim_api_output(const gpusim_api_call *c)
{
    return c->out.data ? c->out.data : "";
}

const char *gpusim_api_notes(const gpusim_api_call *c)
{
    return c->notes.data ? c->notes.data : "";
}

void gpusim_api_free(gpusim_api_call *c)
{
    if (c == NULL)
        return;
    sim_buf_release(&c->out);
    sim_buf_release(&c->notes);
    free(c);
}

const char *gpusim_api_version(void)
{
    return GPUSIM_VERSION;
}
