<?php

/*
 * Tracebox wire replay of sentry-php 3.18.0 (sentry/sentry, default options,
 * HTTP stack of the sentry/sdk 3.x metapackage: HTTPlug plugins + Symfony
 * HttpClient over ext-curl).
 *
 * The real SDK cannot be installed on this project's machines (Packagist is not
 * reachable), so this script rebuilds, with Debian's php-cli + php-curl, the
 * requests sentry-php 3.18.0 makes for:
 *   (a) an exception (InvalidArgumentException "invalid quantity: 7" thrown in
 *       validate_quantity <- process_order <- handle_request); the stack trace is
 *       built from the real exception's getTrace() the way StacktraceBuilder /
 *       FrameBuilder / FrameContextifierIntegration do it;
 *   (b) a message ("tracebox sdk test message", level warning).
 * sentry-php 3.x has no release health (no sessions).
 *
 * What is reproduced (from the SDK 3.x sources: Dsn, HttpClientFactory,
 * SentryAuthentication, GzipEncoderPlugin, HttpTransport, PayloadSerializer,
 * EnvironmentIntegration, FrameContextifierIntegration, Options defaults):
 *   - POST {scheme}://{host}[:port]{path}/api/{project}/store/ (Dsn::getStoreApiEndpointUrl,
 *     DSN path prefix kept, port only when not the scheme default); errors go
 *     to /store/ because tracing is disabled by default;
 *   - Content-Type: application/json; body gzcompress(json, -1, ZLIB_ENCODING_GZIP)
 *     with Content-Encoding: gzip (enable_compression defaults to true);
 *   - X-Sentry-Auth: Sentry sentry_version=7, sentry_client=sentry.php/3.18.0, sentry_key=K
 *     (+ ", sentry_secret=S" for a DSN with a secret);
 *   - User-Agent: sentry.php/3.18.0; Accept-Encoding / TE from HTTPlug's
 *     DecoderPlugin; "Accept: any" (star-slash-star) from Symfony HttpClient (which also suppresses
 *     curl's "Expect: 100-continue");
 *   - the JSON built by PayloadSerializer::toArray (key order, float timestamp,
 *     user with null fields, os/runtime contexts, mechanism with data.code,
 *     "logger":"php", no "level" on exception events, escaped slashes).
 * Approximations: "modules" lists a typical sentry/sdk 3.x install (there is no
 * Composer here); no contexts.trace (tracing without performance came later).
 *
 * Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default
 * "sdk-test@1.0.0"), TRACEBOX_ENV (default "test"), TRACEBOX_REPEAT (default 1).
 * Prints "kind=<kind>" then "event_id=<32hex>" per event; exits 0 only if every
 * request got HTTP 200 (sentry-php treats other codes as failures too).
 */

declare(strict_types=1);

const SDK_IDENTIFIER = 'sentry.php';
const SDK_VERSION = '3.18.0';
const CONTEXT_LINES = 5;

/** @return array{scheme:string,host:string,port:int,path:string,user:string,pass:?string,project:string} */
function parse_dsn(string $value): array
{
    // Sentry\Dsn::createFromString()
    $parsed = parse_url($value);
    if (false === $parsed || !isset($parsed['scheme'], $parsed['host'], $parsed['path'], $parsed['user'])) {
        throw new InvalidArgumentException(sprintf('The "%s" DSN must contain a scheme, a host, a user and a path component.', $value));
    }
    if (isset($parsed['pass']) && empty($parsed['pass'])) {
        throw new InvalidArgumentException(sprintf('The "%s" DSN must contain a valid secret key.', $value));
    }
    if (!in_array($parsed['scheme'], ['http', 'https'], true)) {
        throw new InvalidArgumentException(sprintf('The scheme of the "%s" DSN must be either "http" or "https".', $value));
    }
    $segments = explode('/', $parsed['path']);
    $projectId = array_pop($segments);
    if (!ctype_digit($projectId)) {
        throw new InvalidArgumentException('"%s" DSN must contain a valid project ID.');
    }
    $path = $parsed['path'];
    $lastSlash = strrpos($path, '/');
    if (false !== $lastSlash) {
        $path = substr($path, 0, $lastSlash);
    }

    return [
        'scheme' => $parsed['scheme'],
        'host' => $parsed['host'],
        'port' => $parsed['port'] ?? ('http' === $parsed['scheme'] ? 80 : 443),
        'path' => $path,
        'user' => $parsed['user'],
        'pass' => $parsed['pass'] ?? null,
        'project' => $projectId,
    ];
}

function store_url(array $dsn): string
{
    // Dsn::getBaseEndpointUrl() . '/store/'
    $url = $dsn['scheme'] . '://' . $dsn['host'];
    if (('http' === $dsn['scheme'] && 80 !== $dsn['port']) || ('https' === $dsn['scheme'] && 443 !== $dsn['port'])) {
        $url .= ':' . $dsn['port'];
    }
    $url .= $dsn['path'] . '/api/' . $dsn['project'];

    return $url . '/store/';
}

function auth_header(array $dsn): string
{
    // Sentry\HttpClient\Authentication\SentryAuthentication
    $data = [
        'sentry_version' => '7',
        'sentry_client' => SDK_IDENTIFIER . '/' . SDK_VERSION,
        'sentry_key' => $dsn['user'],
    ];
    if (null !== $dsn['pass']) {
        $data['sentry_secret'] = $dsn['pass'];
    }
    $parts = [];
    foreach ($data as $k => $v) {
        $parts[] = $k . '=' . $v;
    }

    return 'Sentry ' . implode(', ', $parts);
}

function json_encode_sentry($data): string
{
    // Sentry\Util\JSON::encode(): slashes are NOT unescaped
    $json = json_encode($data, JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE);
    if (false === $json) {
        throw new RuntimeException('JSON encoding failed: ' . json_last_error_msg());
    }

    return $json;
}

function event_id(): string
{
    // EventId::generate(): uuid4 without dashes
    $b = random_bytes(16);
    $b[6] = chr((ord($b[6]) & 0x0F) | 0x40);
    $b[8] = chr((ord($b[8]) & 0x3F) | 0x80);

    return bin2hex($b);
}

/** FrameContextifierIntegration: 5 lines before/after, trailing newlines stripped. */
function add_context(array $frame): array
{
    $path = $frame['abs_path'] ?? null;
    if (null === $path || !is_readable($path)) {
        return $frame;
    }
    $lines = file($path);
    if (false === $lines) {
        return $frame;
    }
    $target = $frame['lineno'] - 1;
    if (!isset($lines[$target])) {
        return $frame;
    }
    $pre = [];
    for ($i = max(0, $target - CONTEXT_LINES); $i < $target; ++$i) {
        $pre[] = rtrim($lines[$i], "\r\n");
    }
    $post = [];
    for ($i = $target + 1; $i <= $target + CONTEXT_LINES && isset($lines[$i]); ++$i) {
        $post[] = rtrim($lines[$i], "\r\n");
    }
    $out = [];
    foreach (['filename', 'lineno', 'in_app', 'abs_path', 'function', 'raw_function'] as $k) {
        if (array_key_exists($k, $frame)) {
            $out[$k] = $frame[$k];
        }
    }
    if ($pre) {
        $out['pre_context'] = $pre;
    }
    $out['context_line'] = rtrim($lines[$target], "\r\n");
    if ($post) {
        $out['post_context'] = $post;
    }

    return $out;
}

function strip_prefix(string $file): string
{
    // FrameBuilder::stripPrefixFromFilePath() with the default "prefixes"
    // option (the include_path entries)
    foreach (array_filter(explode(PATH_SEPARATOR, get_include_path() ?: '')) as $prefix) {
        if (0 === strpos($file, $prefix)) {
            return mb_substr($file, mb_strlen($prefix));
        }
    }

    return $file;
}

function make_frame(?string $function, ?string $rawFunction, string $file, int $line): array
{
    $frame = [
        'filename' => '[internal]' === $file ? $file : strip_prefix($file),
        'lineno' => $line,
        // FrameBuilder::isFrameInApp(): no in_app_include/exclude by default -> true
        'in_app' => '[internal]' !== $file && !(null !== $function && 0 === strpos($function, 'Sentry\\')),
    ];
    if ('[internal]' !== $file) {
        $frame['abs_path'] = $file;
    }
    if (null !== $function) {
        $frame['function'] = $function;
    }
    if (null !== $rawFunction) {
        $frame['raw_function'] = $rawFunction;
    }

    return add_context($frame);
}

/** StacktraceBuilder::buildFromBacktrace($e->getTrace(), $e->getFile(), $e->getLine()) */
function stacktrace_from(Throwable $e): array
{
    $file = $e->getFile();
    $line = $e->getLine();
    $frames = [];
    foreach ($e->getTrace() as $bt) {
        $function = null;
        $raw = null;
        if (isset($bt['class'], $bt['function'])) {
            $raw = sprintf('%s::%s', $bt['class'], $bt['function']);
            $function = sprintf('%s::%s', preg_replace('/0x[a-fA-F0-9]+$/', '', $bt['class']), $bt['function']);
        } elseif (isset($bt['function'])) {
            $function = $bt['function'];
        }
        array_unshift($frames, make_frame($function, $raw, $file, $line));
        $file = $bt['file'] ?? '[internal]';
        $line = $bt['line'] ?? 0;
    }
    array_unshift($frames, make_frame(null, null, $file, $line));

    return ['frames' => $frames];
}

function base_event(?string $level): array
{
    $event = [
        'event_id' => event_id(),
        'timestamp' => microtime(true),
        'platform' => 'php',
        'sdk' => ['name' => SDK_IDENTIFIER, 'version' => SDK_VERSION],
    ];
    if (null !== $level) {
        $event['level'] = $level;
    }
    $event['logger'] = 'php';
    $event['server_name'] = gethostname();
    $event['release'] = getenv('TRACEBOX_RELEASE') ?: 'sdk-test@1.0.0';
    $event['environment'] = getenv('TRACEBOX_ENV') ?: 'test';
    // ModulesIntegration (Composer's installed packages): a typical sentry/sdk 3.x install
    $event['modules'] = [
        'tracebox/sdk-test' => '1.0.0+no-version-set',
        'clue/stream-filter' => 'v1.6.0',
        'guzzlehttp/promises' => '1.5.3',
        'guzzlehttp/psr7' => '2.5.0',
        'http-interop/http-factory-guzzle' => '1.2.0',
        'jean85/pretty-package-versions' => '2.0.5',
        'php-http/client-common' => '2.7.0',
        'php-http/discovery' => '1.18.1',
        'php-http/httplug' => '2.4.0',
        'php-http/message' => '1.14.0',
        'php-http/message-factory' => '1.1.0',
        'php-http/promise' => '1.1.0',
        'psr/http-client' => '1.0.2',
        'psr/http-factory' => '1.0.2',
        'psr/http-message' => '1.1',
        'psr/log' => '3.0.0',
        'sentry/sdk' => '3.4.0',
        'sentry/sentry' => SDK_VERSION,
        'symfony/deprecation-contracts' => 'v3.2.1',
        'symfony/http-client' => 'v6.2.10',
        'symfony/http-client-contracts' => 'v3.2.1',
        'symfony/options-resolver' => 'v6.2.7',
        'symfony/polyfill-php80' => 'v1.27.0',
        'symfony/service-contracts' => 'v3.2.1',
    ];
    // Scope user (UserDataBag): every known field is serialized, nulls included
    $event['user'] = [
        'id' => 'user-42',
        'username' => null,
        'email' => 'user42@example.com',
        'ip_address' => null,
        'segment' => null,
    ];
    // EnvironmentIntegration
    $event['contexts'] = [
        'os' => [
            'name' => php_uname('s'),
            'version' => php_uname('r'),
            'build' => php_uname('v'),
            'kernel_version' => php_uname('a'),
        ],
        'runtime' => [
            'name' => 'php',
            'version' => preg_replace('/^(\d+\.\d+\.\d+).*$/', '$1', PHP_VERSION),
        ],
    ];

    return $event;
}

function exception_event(Throwable $e): array
{
    // Client::captureException(): no level is set on exception events
    $event = base_event(null);
    $event['exception'] = ['values' => [[
        'type' => get_class($e),
        'value' => $e->getMessage(),
        'stacktrace' => stacktrace_from($e),
        'mechanism' => ['type' => 'generic', 'handled' => true, 'data' => ['code' => $e->getCode()]],
    ]]];

    return $event;
}

function message_event(string $message, string $level): array
{
    $event = base_event($level);
    $event['message'] = $message;

    return $event;
}

/** @return array{0:int,1:string} HTTP status and error text */
function send_store(array $dsn, array $event): array
{
    $body = gzcompress(json_encode_sentry($event), -1, ZLIB_ENCODING_GZIP);
    $headers = [
        'User-Agent: ' . SDK_IDENTIFIER . '/' . SDK_VERSION,
        'X-Sentry-Auth: ' . auth_header($dsn),
        'Content-Type: application/json',
        'Content-Encoding: gzip',
        'Accept-Encoding: gzip, deflate',
        'TE: gzip, deflate, chunked',
        'Accept: */*',
        'Expect:',
    ];
    $ch = curl_init(store_url($dsn));
    curl_setopt_array($ch, [
        CURLOPT_POST => true,
        CURLOPT_POSTFIELDS => $body,
        CURLOPT_HTTPHEADER => $headers,
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_HTTP_VERSION => CURL_HTTP_VERSION_1_1,
        CURLOPT_CONNECTTIMEOUT => 2,
        CURLOPT_TIMEOUT => 5,
    ]);
    $response = curl_exec($ch);
    $status = (int) curl_getinfo($ch, CURLINFO_RESPONSE_CODE);
    $error = false === $response ? curl_error($ch) : '';
    curl_close($ch);

    return [$status, $error !== '' ? $error : (string) $response];
}

function validate_quantity(int $quantity): void
{
    if ($quantity > 5) {
        throw new InvalidArgumentException(sprintf('invalid quantity: %d', $quantity));
    }
}

function process_order(int $quantity): void
{
    validate_quantity($quantity);
}

function handle_request(int $quantity): void
{
    process_order($quantity);
}

function main(): int
{
    $dsnString = getenv('SENTRY_DSN');
    if (false === $dsnString || '' === $dsnString) {
        fwrite(STDERR, "SENTRY_DSN is not set\n");

        return 2;
    }
    $dsn = parse_dsn($dsnString);
    $repeat = max(1, (int) (getenv('TRACEBOX_REPEAT') ?: 1));

    $events = [];
    for ($i = 0; $i < $repeat; ++$i) {
        try {
            handle_request(7);
        } catch (InvalidArgumentException $e) {
            $events[] = ['exception', exception_event($e)];
        }
    }
    $events[] = ['message', message_event('tracebox sdk test message', 'warning')];

    $code = 0;
    foreach ($events as [$kind, $event]) {
        [$status, $detail] = send_store($dsn, $event);
        echo "kind={$kind}\n";
        if (200 === $status) {
            echo "event_id={$event['event_id']}\n";
        } else {
            fwrite(STDERR, sprintf("transport error: %s event %s: HTTP %d %s\n", $kind, $event['event_id'], $status, $detail));
            $code = 1;
        }
    }

    return $code;
}

exit(main());
