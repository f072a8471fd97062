<?php

/*
 * Two PHP warnings raised at two lines of one top-level script, reported by the real
 * sentry-php SDK (tests/samples/php-4.29.0-warnings/). Top-level code has no function,
 * so only the source line tells the two apart (grouping version tracebox:2).
 *
 * The SDK cannot be installed here with Composer (Packagist is not reachable): point
 * SENTRY_PHP_SRC at the src/ directory of a sentry-php 4.x checkout; its dependencies
 * come from Debian (php-guzzlehttp-psr7, php-psr-log, php-symfony-options-resolver,
 * php-curl, php-mbstring). jean85/pretty-package-versions is not packaged: the SDK asks
 * it only for installed package versions, so a stand-in answers "unknown".
 *
 * Environment: SENTRY_DSN, SENTRY_PHP_SRC. Prints "kind=warning" and "event_id=<hex>"
 * per event sent.
 */

declare(strict_types=1);

foreach (['GuzzleHttp/Psr7', 'Psr/Log', 'Psr/Http/Message', 'Symfony/Component/OptionsResolver'] as $lib) {
    require_once "/usr/share/php/$lib/autoload.php";
}
$src = rtrim((string) getenv('SENTRY_PHP_SRC'), '/');
spl_autoload_register(static function (string $class) use ($src): void {
    if (str_starts_with($class, 'Sentry\\')) {
        $file = $src . '/' . str_replace('\\', '/', substr($class, 7)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    } elseif ($class === 'Jean85\\PrettyVersions') {
        eval('namespace Jean85; final class PrettyVersions { public static function getVersion(string $p): Version { return new Version($p); } public static function getRootPackageName(): string { return "tracebox/sdk-test"; } public static function getRootPackageVersion(): Version { return new Version("tracebox/sdk-test"); } }');
    } elseif ($class === 'Jean85\\Version') {
        eval('namespace Jean85; final class Version { public function __construct(private string $n) {} public function getPrettyVersion(): string { return "unknown"; } public function getShortVersion(): string { return "unknown"; } public function getPackageName(): string { return $this->n; } public function getFullVersion(): string { return "unknown"; } public function getReference(): string { return ""; } public function getShortReference(): string { return ""; } public function __toString(): string { return "unknown"; } }');
    }
});
require_once $src . '/functions.php';

\Sentry\init([
    'dsn' => getenv('SENTRY_DSN'),
    'release' => 'sdk-test@1.0.0',
    'environment' => 'test',
    'before_send' => static function (\Sentry\Event $event): \Sentry\Event {
        echo "kind=warning\nevent_id=" . $event->getId() . "\n";
        return $event;
    },
]);

$total = file_get_contents('/nonexistent/tracebox-input.txt');
echo $undefined_total;

\Sentry\SentrySdk::getCurrentHub()->getClient()?->flush();
