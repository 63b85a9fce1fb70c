// Greets whoever the request names. A plain HTTP request
// (curl $URL/?name=ada) is an AWS Lambda function URL event; a CloudEvent
// holds its attributes and its data.
exports.handler = async (event, context) => {
  let who;
  if (event.requestContext) {
    who = (event.queryStringParameters || {}).name;
  } else if (event.data && typeof event.data === 'object') {
    who = event.data.name;
  }
  return { hello: who || 'world' };
};
