/* mpi.h — a sweep spread over the ranks of an MPI job (mpirun, srun). Rank 0
 * coordinates: it hands out one job at a time to whichever rank asks (traces differ a
 * lot in length), keeps giving a rank jobs of the trace it already holds, writes every
 * result to the file (run.h) and runs local workers of its own. Ranks > 0 replay. */

/* A rank silent for longer than the heartbeat timeout while it holds a job is declared
 * dead: that job is reported lost (a later --resume runs it) and the rest goes on.
 * Built only with GPUSIM_MPI; without it sweep_mpi_available() is false and the rest
 * are never called. */
#ifndef GPUSIM_SWEEP_MPI_H
#define GPUSIM_SWEEP_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "sweep/run.h"
#include "sweep/spec.h"

typedef struct sweep_mpi {
    int rank, size;
    bool active;          /* MPI was initialized */
} sweep_mpi;

bool sweep_mpi_available(void);
/* Whether this process was started by an MPI launcher (its environment says so). */
bool sweep_mpi_launched(void);
sim_status sweep_mpi_init(sweep_mpi *m, sim_error *err);
void sweep_mpi_finalize(sweep_mpi *m);
/* End every rank at once (MPI_Abort). */
void sweep_mpi_abort(sweep_mpi *m, int code);
/* Rank 0 cannot start (bad spec, results file): answer every rank's first
 * message with "stop", waiting at most heartbeat_s for each, so all can finalize. */
void sweep_mpi_dismiss(sweep_mpi *m, double heartbeat_s);

typedef struct sweep_mpi_report {
    int exit_code;        /* worst exit code of a job */
    uint64_t lost;        /* jobs lost with a rank that died */
    uint32_t dead_ranks;
} sweep_mpi_report;

/* Rank 0: run every job not done yet over all ranks, with local_workers threads
 * of rank 0 working too. heartbeat_s: how long a rank that holds a job may stay
 * silent before it is declared dead. */
sim_status sweep_mpi_coordinate(const sweep_mpi *m, const sweep_spec *s, sweep_results *r, uint32_t local_workers,
                                double heartbeat_s, bool progress, sweep_mpi_report *rep, sim_error *err);
/* Ranks > 0: ask rank 0 for jobs until it says stop. s is NULL when this rank
 * could not load the spec (load_err says why; rank 0 reports it). */
void sweep_mpi_work(const sweep_mpi *m, const sweep_spec *s, const sim_error *load_err, double heartbeat_s);

#endif
