// esbuild bundles the stylesheet a module imports.
declare module '*.css';
