import { chromium, type Browser } from 'playwright-core';

/**
 * Debian's Chromium (hack/test.sh installs it), driven headless by playwright-core, which downloads no browser.
 * `extraArgs`: more switches (the studio's tests let media play without a gesture).
 */
export function launchChromium(extraArgs: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    headless: true,
    // Root in a container has no user namespaces for the sandbox; the tests browse loopback only.
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', ...extraArgs],
  });
}
