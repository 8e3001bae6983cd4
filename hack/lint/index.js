// typescript-eslint as installed in this workspace, beside the TypeScript 6 it runs on
// (the root's `typescript` is 7, which has no JavaScript compiler API): eslint.config.js
// imports it from here so that its `require('typescript')` finds hack/lint/node_modules/typescript.
export { default } from 'typescript-eslint';
