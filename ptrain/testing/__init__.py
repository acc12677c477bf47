"""Test doubles that ship with ptrain: scripted episodes and policies for tests and demos."""
