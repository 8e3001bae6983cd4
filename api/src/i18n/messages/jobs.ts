import { defineMessages } from '../define.ts';

/**
 * Failures of the job system itself (crds/contract/outcome.ts `jobSystemFailures`), the same on
 * both backends; programs' own codes live with their features.
 */
export const jobFailureMessages = defineMessages({
  en: {
    'failure.job.cancelled': 'The job was cancelled.',
    'failure.job.timed_out': 'The job did not finish within its time limit of {seconds} s.',
    'failure.job.failed': 'The job failed: {detail}',
    'failure.job.not_started': 'The job could not be started; try again later.',
    'failure.job.crashed': 'The job stopped unexpectedly before it could finish; try again.',
    'failure.job.spawn_failed': 'The job could not be started on this server.',
    'failure.job.no_result': 'The job finished without a result.',
    'failure.job.invalid_result': 'The job finished with a result that could not be read.',
    'failure.job.lost': 'The job was lost before its outcome was recorded; try again.',
    'failure.job.invalid_spec': 'The job was set up wrongly and could not run.',
    'failure.job.rejected': 'The job could not be scheduled; try again later.',
    'failure.job.out_of_memory': 'The job ran out of memory.',
  },
  pt: {
    'failure.job.cancelled': 'A tarefa foi cancelada.',
    'failure.job.timed_out': 'A tarefa não terminou dentro do limite de tempo de {seconds} s.',
    'failure.job.failed': 'A tarefa falhou: {detail}',
    'failure.job.not_started': 'Não foi possível iniciar a tarefa; tente de novo mais tarde.',
    'failure.job.crashed': 'A tarefa parou inesperadamente antes de terminar; tente de novo.',
    'failure.job.spawn_failed': 'Não foi possível iniciar a tarefa neste servidor.',
    'failure.job.no_result': 'A tarefa terminou sem resultado.',
    'failure.job.invalid_result': 'A tarefa terminou com um resultado que não pôde ser lido.',
    'failure.job.lost': 'A tarefa perdeu-se antes de o seu resultado ser registado; tente de novo.',
    'failure.job.invalid_spec': 'A tarefa foi mal configurada e não pôde correr.',
    'failure.job.rejected': 'Não foi possível agendar a tarefa; tente de novo mais tarde.',
    'failure.job.out_of_memory': 'A tarefa ficou sem memória.',
  },
  es: {
    'failure.job.cancelled': 'La tarea se canceló.',
    'failure.job.timed_out': 'La tarea no terminó dentro de su límite de tiempo de {seconds} s.',
    'failure.job.failed': 'La tarea falló: {detail}',
    'failure.job.not_started': 'No se pudo iniciar la tarea; inténtelo de nuevo más tarde.',
    'failure.job.crashed': 'La tarea se detuvo de forma inesperada antes de terminar; inténtelo de nuevo.',
    'failure.job.spawn_failed': 'No se pudo iniciar la tarea en este servidor.',
    'failure.job.no_result': 'La tarea terminó sin resultado.',
    'failure.job.invalid_result': 'La tarea terminó con un resultado que no se pudo leer.',
    'failure.job.lost': 'La tarea se perdió antes de registrar su resultado; inténtelo de nuevo.',
    'failure.job.invalid_spec': 'La tarea se configuró mal y no pudo ejecutarse.',
    'failure.job.rejected': 'No se pudo programar la tarea; inténtelo de nuevo más tarde.',
    'failure.job.out_of_memory': 'La tarea se quedó sin memoria.',
  },
});
