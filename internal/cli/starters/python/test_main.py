# Run with: python3 -m unittest
import unittest

from main import handler


class HandlerTest(unittest.TestCase):
    def test_plain_http(self):
        event = {"version": "2.0", "rawPath": "/", "rawQueryString": "name=ada",
                 "queryStringParameters": {"name": "ada"},
                 "requestContext": {"http": {"method": "GET", "path": "/"}}}
        self.assertEqual(handler(event, {}), {"hello": "ada"})

    def test_cloudevent(self):
        event = {"id": "1", "source": "/test", "type": "com.example.greet", "data": {"name": "ada"}}
        self.assertEqual(handler(event, {}), {"hello": "ada"})

    def test_nobody(self):
        self.assertEqual(handler({"id": "1", "source": "/test", "type": "com.example.greet"}, {}), {"hello": "world"})


if __name__ == "__main__":
    unittest.main()
