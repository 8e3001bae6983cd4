import { constants } from 'node:fs';
import { access, writeFile } from 'node:fs/promises';

export const DEFAULT_TERMINATION_LOG_PATH = '/dev/termination-log';
/** Kubernetes keeps at most 4096 bytes of a termination message. */
const TERMINATION_MESSAGE_LIMIT = 4096;

/**
 * Writes the failure message where Kubernetes reads the pod's termination message.
 * Only into a file that already exists (the kubelet mounts it): outside a pod this
 * must not create files under /dev.
 */
export async function writeTerminationMessage(path: string, message: string): Promise<boolean> {
  try {
    await access(path, constants.W_OK);
    await writeFile(path, Buffer.from(message).subarray(0, TERMINATION_MESSAGE_LIMIT));
    return true;
  } catch {
    return false;
  }
}
