from django.urls import path

app_name = "correlation"
urlpatterns: list = []
