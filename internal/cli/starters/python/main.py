def handler(event, context):
    """Greets whoever the request names.

    A plain HTTP request (curl $URL/?name=ada) is an AWS Lambda function URL
    event; a CloudEvent holds its attributes and its data.
    """
    if "requestContext" in event:
        who = (event.get("queryStringParameters") or {}).get("name")
    else:
        data = event.get("data")
        who = data.get("name") if isinstance(data, dict) else None
    return {"hello": who or "world"}
