/** Structured JSON log lines on stderr: stdout is reserved for progress lines. */
export interface JobLog {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export function createJobLog(
  base: Record<string, unknown>,
  write: (line: string) => void = (line) => process.stderr.write(line),
): JobLog {
  const emit = (level: string, message: string, fields?: Record<string, unknown>): void => {
    write(`${JSON.stringify({ level, time: new Date().toISOString(), ...base, ...fields, msg: message })}\n`);
  };
  return {
    info: (message, fields) => emit('info', message, fields),
    warn: (message, fields) => emit('warn', message, fields),
    error: (message, fields) => emit('error', message, fields),
  };
}
