"""acute"""
