// The embedded S3-compatible server of `hack/up.sh`, as a process of its own: uploads and
// downloads go to it directly and never cross the api's event loop.
//   EMBEDDED_S3_DIR (default .data/s3), EMBEDDED_S3_PORT (default 8001), HOST, S3_BUCKET,
//   S3_SECRET_ACCESS_KEY (what every signature is verified against; required),
//   PUBLIC_BASE_URL (default http://HOST:PORT) and CORS_ALLOWED_ORIGINS (comma-separated, as the
//   api reads it): the origins whose pages may upload from a browser
import { loadConfig, publicBaseUrl } from '../../api/src/config.ts';
import { startEmbeddedS3 } from './embedded-s3.ts';

/** The api's own origin and those it lets call it (CORS_ALLOWED_ORIGINS), parsed as the api parses them. */
function browserOrigins(): string[] {
  const config = loadConfig();
  return [...new Set([new URL(publicBaseUrl(config)).origin, ...config.CORS_ALLOWED_ORIGINS])];
}

const host = process.env.HOST || '127.0.0.1';
const secretAccessKey = process.env.S3_SECRET_ACCESS_KEY;
if (!secretAccessKey) throw new Error('S3_SECRET_ACCESS_KEY is required: the embedded store verifies every request against it');
const s3 = await startEmbeddedS3({
  directory: process.env.EMBEDDED_S3_DIR || '.data/s3',
  bucket: process.env.S3_BUCKET || 'cutroom-media',
  port: Number(process.env.EMBEDDED_S3_PORT || 8001),
  host,
  secretAccessKey,
  corsOrigins: browserOrigins(),
});
console.log(JSON.stringify({ level: 30, service: 'cutroom-embedded-s3', msg: 'embedded S3 started', endpoint: s3.endpoint, bucket: s3.bucket }));
const stop = () => void s3.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
