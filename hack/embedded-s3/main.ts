// The embedded S3-compatible server of `hack/up.sh`, as a process of its own: uploads and
// downloads go to it directly and never cross the api's event loop.
//   EMBEDDED_S3_DIR (default .data/s3), EMBEDDED_S3_PORT (default 8001), HOST, S3_BUCKET
import { startEmbeddedS3 } from './embedded-s3.ts';

const s3 = await startEmbeddedS3({
  directory: process.env.EMBEDDED_S3_DIR || '.data/s3',
  bucket: process.env.S3_BUCKET || 'cutroom-media',
  port: Number(process.env.EMBEDDED_S3_PORT || 8001),
  host: process.env.HOST || '127.0.0.1',
});
console.log(JSON.stringify({ level: 30, service: 'cutroom-embedded-s3', msg: 'embedded S3 started', endpoint: s3.endpoint, bucket: s3.bucket }));
const stop = () => void s3.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
