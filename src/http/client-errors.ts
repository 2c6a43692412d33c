/**
 * Errors of Node's HTTP parser, before any request object exists (oversized headers, broken chunked
 * encoding, Content-Length with Transfer-Encoding, NUL bytes, a bad Expect…). Node would answer a bare
 * status line; here they get a problem+json body like every other error, and the connection closes
 * (the parser's state is lost, so nothing more can be read from it).
 */
import { type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { jsonText } from './json-text.js';
import { Problem } from './problem.js';

interface ParserError extends Error {
  code?: string;
}

export function problemOfParserError(error: ParserError): Problem {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new Problem(431, 'headers_too_large', 'the request headers are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'HPE_HEADERS_TIMEOUT':
      return new Problem(408, 'request_timeout', 'the request was not received in time');
    default:
      return new Problem(400, 'invalid_request', 'the request is not valid HTTP/1.1', {
        errors: [{ path: '/', message: 'is not valid HTTP' }],
      });
  }
}

/** The server's 'clientError' listener. */
export function answerClientError(error: ParserError, socket: Duplex): void {
  // A reset or a socket already answered: there is no one left to tell.
  const inProgress = (socket as { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (error.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  endWithProblem(socket, problemOfParserError(error));
}

/**
 * The server's 'connect' listener. Node hands a CONNECT request over as a bare socket (a tunnel is for a
 * proxy to open) and, with no listener, closes it without a word: this is not a proxy, so it is 405.
 */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  endWithProblem(
    socket,
    new Problem(405, 'method_not_allowed', 'CONNECT is not supported: this server is not a proxy'),
    'Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n',
  );
}

/** Answers on the raw socket (no response object exists) and closes it. */
function endWithProblem(socket: Duplex, problem: Problem, extraHeaders = ''): void {
  const body = jsonText(problem.toBody());
  socket.end(
    `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status] ?? 'Error'}\r\n` +
      'Content-Type: application/problem+json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      extraHeaders +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** The server's 'checkExpectation' listener: an Expect other than 100-continue is 417, with a body. */
export function answerFailedExpectation(_request: IncomingMessage, response: ServerResponse): void {
  const body = jsonText(new Problem(417, 'expectation_failed', 'only "Expect: 100-continue" is supported').toBody());
  response.writeHead(417, {
    'Content-Type': 'application/problem+json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  response.end(body);
}
