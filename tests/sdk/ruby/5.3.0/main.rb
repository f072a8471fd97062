# frozen_string_literal: true

# Tracebox SDK compatibility program for sentry-ruby 5.3.0 (Debian 12's
# ruby-sentry-ruby package; RubyGems.org is not reachable from this project's
# machines, so the Debian version is the one we can test).
#
# Environment: SENTRY_DSN (required), TRACEBOX_RELEASE (default
# "sdk-test@1.0.0"), TRACEBOX_ENV (default "test"), TRACEBOX_REPEAT (default 1),
# TRACEBOX_SDK_DEBUG (log everything the SDK says).
#
# Sends, with user id "user-42":
#   * TRACEBOX_REPEAT exception events: ArgumentError("invalid quantity: 7")
#     raised in validate_quantity <- process_order <- handle_request (same path);
#   * one message event "tracebox sdk test message" at level warning;
#   * release health: the work runs inside Sentry.with_session_tracking (what the
#     Rack middleware does per request); sentry-ruby 5.3 only sends pre-aggregated
#     "sessions" items, every 60 s from a thread that at_exit kills without a final
#     flush, so we call Sentry.session_flusher.flush ourselves.
#
# Events are sent synchronously (background_worker_threads = 0) so that failures
# surface before exit. Prints "kind=<kind>" then "event_id=<32hex>" per event.
# Exits 0 only if the SDK logged no ERROR through its logger (it logs "Event
# sending failed: ..." / "exception happened in background worker: ..." when its
# HTTP transport raises Sentry::ExternalError on a non-2xx answer or a socket
# error) and its HTTPTransport#send_data returned normally for every event plus
# the session envelope.

require "logger"
require "sentry-ruby"

# The SDK's logger hook: records ERROR/FATAL lines.
class RecordingLogger < ::Logger
  attr_reader :errors

  def initialize(io)
    super(io)
    @errors = []
    self.level = ENV["TRACEBOX_SDK_DEBUG"].to_s.empty? ? ::Logger::WARN : ::Logger::DEBUG
  end

  def add(severity, message = nil, progname = nil, &block)
    if severity && severity >= ::Logger::ERROR
      text = message || (block ? block.call : progname)
      @errors << text.to_s
      return super(severity, text, progname)
    end
    super
  end
end

# Counts HTTP requests that the SDK's own transport completed without raising.
module SendDataRecorder
  @delivered = 0
  @failures = []
  class << self
    attr_accessor :delivered, :failures
  end

  def send_data(data)
    result = super
    SendDataRecorder.delivered += 1
    result
  rescue Exception => e # rubocop:disable Lint/RescueException
    SendDataRecorder.failures << "#{e.class}: #{e.message}"
    raise
  end
end
Sentry::HTTPTransport.prepend(SendDataRecorder)

def validate_quantity(quantity)
  raise ArgumentError, "invalid quantity: #{quantity}" if quantity > 5
end

def process_order(quantity)
  validate_quantity(quantity)
end

def handle_request(quantity)
  process_order(quantity)
end

def main
  dsn = ENV["SENTRY_DSN"].to_s
  if dsn.empty?
    warn "SENTRY_DSN is not set"
    return 2
  end
  repeat = [ENV.fetch("TRACEBOX_REPEAT", "1").to_i, 1].max
  logger = RecordingLogger.new($stderr)

  Sentry.init do |config|
    config.dsn = dsn
    config.release = ENV["TRACEBOX_RELEASE"].to_s.empty? ? "sdk-test@1.0.0" : ENV["TRACEBOX_RELEASE"]
    config.environment = ENV["TRACEBOX_ENV"].to_s.empty? ? "test" : ENV["TRACEBOX_ENV"]
    config.background_worker_threads = 0
    config.auto_session_tracking = true
    config.logger = logger
    config.debug = !ENV["TRACEBOX_SDK_DEBUG"].to_s.empty?
  end
  Sentry.set_user(id: "user-42", email: "user42@example.com")

  events = 0
  Sentry.with_session_tracking do
    repeat.times do
      begin
        handle_request(7)
      rescue ArgumentError => e
        event = Sentry.capture_exception(e)
        puts "kind=exception"
        puts "event_id=#{event.event_id}" if event
        events += 1
      end
    end
    event = Sentry.capture_message("tracebox sdk test message", level: :warning)
    puts "kind=message"
    puts "event_id=#{event.event_id}" if event
    events += 1
  end
  Sentry.session_flusher.flush
  puts "kind=session"
  $stdout.flush

  code = 0
  logger.errors.each do |err|
    warn "sdk logged an error: #{err.lines.first}"
    code = 1
  end
  SendDataRecorder.failures.each do |f|
    warn "transport error: #{f}"
    code = 1
  end
  if SendDataRecorder.delivered < events + 1
    warn "only #{SendDataRecorder.delivered} requests delivered, expected >= #{events + 1}"
    code = 1
  end
  code
end

exit(main)
